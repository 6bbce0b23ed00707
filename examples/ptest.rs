use diff2test::ingest::depfile_syntax::{parse_into, Sink};
use std::borrow::Cow;
use std::time::Instant;
struct Count(usize, usize);
impl<'a> Sink<'a> for Count {
    fn target(&mut self, _n: Cow<'a, str>) {}
    fn prereq(&mut self, n: Cow<'a, str>) {
        self.0 += 1;
        self.1 += n.len();
    }
    fn end_rule(&mut self) {}
}
struct Hash(diff2test::fasthash::FastMap<Box<str>, u32>, u64);
impl<'a> Sink<'a> for Hash {
    fn target(&mut self, _n: Cow<'a, str>) {}
    fn prereq(&mut self, n: Cow<'a, str>) {
        if let Some(&v) = self.0.get(&*n) {
            self.1 += v as u64;
        } else {
            let l = self.0.len() as u32;
            self.0.insert(n.as_ref().into(), l);
        }
    }
    fn end_rule(&mut self) {}
}
fn main() {
    let list = std::fs::read_to_string(std::env::args().nth(1).unwrap()).unwrap();
    let bufs: Vec<Vec<u8>> = list.lines().map(|p| std::fs::read(p).unwrap()).collect();
    for _ in 0..3 {
        let t = Instant::now();
        let mut c = Count(0, 0);
        for b in &bufs {
            parse_into(b, &mut c).unwrap();
        }
        println!(
            "count: {} toks {} bytes {:.1} ms",
            c.0,
            c.1,
            t.elapsed().as_secs_f64() * 1e3
        );
        let t = Instant::now();
        let mut h = Hash(Default::default(), 0);
        for b in &bufs {
            parse_into(b, &mut h).unwrap();
        }
        println!(
            "hash: {} uniq {:.1} ms",
            h.0.len(),
            t.elapsed().as_secs_f64() * 1e3
        );
        let t = Instant::now();
        let mut n = 0u64;
        for b in &bufs {
            n += std::str::from_utf8(b).map(|s| s.len()).unwrap_or(0) as u64;
        }
        println!("utf8: {n} {:.1} ms", t.elapsed().as_secs_f64() * 1e3);
    }
}
