//! Build once, copy many: a pool of build slots.
//!
//! A CMake build tree holds absolute paths, so a copy of one only works at
//! the path it was built at. A *slot* is such a path: `SLOT/work` is the
//! live tree a test uses, `SLOT/pristine` a copy (`cp -a`, timestamps kept)
//! saved right after it was first built. A test leases a slot for a key (the
//! build's inputs); when a free slot of that key exists, its work tree is
//! restored from the pristine copy instead of being built again, and the
//! test gets exactly the tree a fresh build at that path gave. A slot is
//! leased by one test at a time and goes back to the pool when the lease is
//! dropped (also when the test panics); tests running at once get slots of
//! their own, so each key is built at most once per concurrent test thread.
//!
//! Slots live under one directory per test process in cargo's scratch dir;
//! directories of processes that are gone are removed when the first slot is
//! made.

use std::any::Any;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Arc, Mutex, OnceLock};

/// One slot: its directory, and what its builder saved beside the pristine tree.
struct Slot {
    dir: PathBuf,
    data: Option<Arc<dyn Any + Send + Sync>>,
}

/// Free slots by key.
static FREE: OnceLock<Mutex<HashMap<String, Vec<Slot>>>> = OnceLock::new();
static NEXT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

fn free() -> &'static Mutex<HashMap<String, Vec<Slot>>> {
    FREE.get_or_init(Default::default)
}

/// This process's directory of slots (stale ones of dead processes removed).
fn slots_root() -> &'static Path {
    static ROOT: OnceLock<PathBuf> = OnceLock::new();
    ROOT.get_or_init(|| {
        let tmp = super::scratch_root();
        if let Ok(entries) = std::fs::read_dir(&tmp) {
            for e in entries.flatten() {
                let name = e.file_name().to_string_lossy().into_owned();
                if let Some(pid) = name.strip_prefix("d2t-slots-") {
                    if !Path::new("/proc").join(pid).exists() {
                        let _ = std::fs::remove_dir_all(e.path());
                    }
                }
            }
        }
        let root = tmp.join(format!("d2t-slots-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        std::fs::create_dir_all(&root).unwrap();
        root
    })
}

/// A slot leased by one test.
pub struct Lease {
    key: Option<String>,
    slot: Option<Slot>,
    /// The work tree was restored from the pristine copy (else it is new and empty).
    restored: bool,
    saved: bool,
}

/// Leases a slot for `key`: a free one, its work tree restored, or a new one
/// with an empty work tree, which the caller builds and then [`Lease::save`]s.
pub fn lease(key: &str) -> Lease {
    let taken = free().lock().unwrap().get_mut(key).and_then(|v| v.pop());
    match taken {
        Some(slot) => {
            let l = Lease {
                key: Some(key.to_owned()),
                slot: Some(slot),
                restored: true,
                saved: true,
            };
            l.restore();
            l
        }
        None => new_lease(Some(key.to_owned())),
    }
}

/// A slot of its own, never shared (a build whose inputs have no key).
pub fn unshared() -> Lease {
    new_lease(None)
}

fn new_lease(key: Option<String>) -> Lease {
    let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let dir = slots_root().join(format!("s{n}"));
    std::fs::create_dir_all(dir.join("work")).unwrap();
    Lease {
        key,
        slot: Some(Slot { dir, data: None }),
        restored: false,
        saved: false,
    }
}

fn cp_a(from: &Path, to: &Path) {
    let _ = std::fs::remove_dir_all(to);
    let ok = Command::new("cp")
        .arg("-a")
        .arg(from)
        .arg(to)
        .status()
        .map(|s| s.success())
        .unwrap_or(false);
    assert!(ok, "cp -a {} {} failed", from.display(), to.display());
}

impl Lease {
    fn slot(&self) -> &Slot {
        self.slot.as_ref().expect("a lease holds its slot")
    }

    /// The live tree (the same path every time this slot is leased).
    pub fn work(&self) -> PathBuf {
        self.slot().dir.join("work")
    }

    /// Whether the work tree was restored from a saved build (else: build it).
    pub fn restored(&self) -> bool {
        self.restored
    }

    /// Saves the work tree as it is now as the slot's pristine copy, with `data`
    /// (what later leases get from [`Lease::data`]).
    pub fn save<T: Any + Send + Sync>(&mut self, data: T) {
        let slot = self.slot.as_mut().expect("a lease holds its slot");
        cp_a(&slot.dir.join("work"), &slot.dir.join("pristine"));
        slot.data = Some(Arc::new(data));
        self.saved = true;
    }

    /// Replaces the data saved with the pristine copy.
    pub fn set_data<T: Any + Send + Sync>(&mut self, data: T) {
        let slot = self.slot.as_mut().expect("a lease holds its slot");
        slot.data = Some(Arc::new(data));
    }

    /// Replaces the work tree by the pristine copy.
    pub fn restore(&self) {
        let dir = &self.slot().dir;
        cp_a(&dir.join("pristine"), &dir.join("work"));
    }

    /// The data saved with the pristine copy.
    pub fn data<T: Any + Send + Sync + Clone>(&self) -> T {
        let data = self.slot().data.as_ref().expect("a saved slot has data");
        data.downcast_ref::<T>()
            .expect("slot data of the saved type")
            .clone()
    }

    /// Keeps the slot's trees on disk and out of the pool (for a look by hand).
    pub fn keep(mut self) -> PathBuf {
        let dir = self.slot.take().expect("a lease holds its slot").dir;
        dir.join("work")
    }
}

impl Drop for Lease {
    fn drop(&mut self) {
        let Some(slot) = self.slot.take() else {
            return;
        };
        match (&self.key, self.saved) {
            (Some(key), true) => free()
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .entry(key.clone())
                .or_default()
                .push(slot),
            _ => {
                let _ = std::fs::remove_dir_all(&slot.dir);
            }
        }
    }
}
