#include <linux/io_uring.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <fcntl.h>
#include <unistd.h>
#include <cstring>
#include <string>
struct Ring {
  int fd; unsigned *sq_tail, *sq_mask, *sq_array, *cq_head, *cq_tail, *cq_mask;
  io_uring_sqe* sqes; io_uring_cqe* cqes;
};
static int submit(Ring& r, const io_uring_sqe& e) {
  unsigned tail = *r.sq_tail, idx = tail & *r.sq_mask;
  r.sqes[idx] = e; r.sq_array[idx] = idx;
  __atomic_store_n(r.sq_tail, tail + 1, __ATOMIC_RELEASE);
  if (syscall(__NR_io_uring_enter, r.fd, 1, 1, IORING_ENTER_GETEVENTS, nullptr, 0) < 0) return -1000;
  unsigned head = *r.cq_head;
  while (head == __atomic_load_n(r.cq_tail, __ATOMIC_ACQUIRE)) {}
  int res = r.cqes[head & *r.cq_mask].res;
  __atomic_store_n(r.cq_head, head + 1, __ATOMIC_RELEASE);
  return res;
}
int main() {
  io_uring_params p; std::memset(&p, 0, sizeof p);
  int fd = (int)syscall(__NR_io_uring_setup, 4, &p);
  if (fd < 0) return 2;
  size_t sq_sz = p.sq_off.array + p.sq_entries * sizeof(unsigned);
  size_t cq_sz = p.cq_off.cqes + p.cq_entries * sizeof(io_uring_cqe);
  size_t sz = sq_sz > cq_sz ? sq_sz : cq_sz;
  char* q = (char*)mmap(nullptr, sz, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, fd, IORING_OFF_SQ_RING);
  void* s = mmap(nullptr, p.sq_entries * sizeof(io_uring_sqe), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, fd, IORING_OFF_SQES);
  if (q == MAP_FAILED || s == MAP_FAILED) return 2;
  Ring r{fd, (unsigned*)(q + p.sq_off.tail), (unsigned*)(q + p.sq_off.ring_mask), (unsigned*)(q + p.sq_off.array),
         (unsigned*)(q + p.cq_off.head), (unsigned*)(q + p.cq_off.tail), (unsigned*)(q + p.cq_off.ring_mask),
         (io_uring_sqe*)s, (io_uring_cqe*)(q + p.cq_off.cqes)};
  io_uring_sqe e; std::memset(&e, 0, sizeof e);
  e.opcode = IORING_OP_OPENAT; e.fd = AT_FDCWD; e.addr = (unsigned long)DATA; e.open_flags = O_RDONLY;
  int file = submit(r, e);
  if (file < 0) return 3;
  char buf[64] = {0};
  std::memset(&e, 0, sizeof e);
  e.opcode = IORING_OP_READ; e.fd = file; e.addr = (unsigned long)buf; e.len = sizeof buf - 1;
  int n = submit(r, e);
  if (n < 0) return 4;
  return std::string(buf, n) == "in\n" ? 0 : 1;
}
