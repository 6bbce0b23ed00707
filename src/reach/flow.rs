//! Test-to-test data flow: fixtures, DEPENDS and RESOURCE_LOCK link tests
//! that may hand data to each other, and so does a build-tree path two
//! tests name that no build step writes (one test's output, the other's
//! input: a `FIXTURES_CLEANUP` test writing what a later, unrelated test
//! reads), so a selected test selects the tests its data reaches, and
//! `--shard` keeps a linked group in one shard.

use crate::fasthash::FastMap;
use crate::ingest::ctest::Catalogue;

/// Test name → the smallest name of its data-flow group (tests linked by a
/// fixture, DEPENDS, RESOURCE_LOCK or a shared test-time path, `shared[i]`
/// being what test `i` names; empty when not known yet), for every test in
/// a group of two or more.
pub fn flow_groups(
    catalogue: &Catalogue,
    shared: &[Vec<String>],
) -> std::collections::BTreeMap<String, String> {
    let tests = &catalogue.tests;
    let index = name_index(catalogue);
    let mut parent: Vec<usize> = (0..tests.len()).collect();
    fn root(p: &mut [usize], mut i: usize) -> usize {
        while p[i] != i {
            p[i] = p[p[i]];
            i = p[i];
        }
        i
    }
    let mut by_key: FastMap<String, usize> = FastMap::default();
    for (i, t) in tests.iter().enumerate() {
        let keys = t
            .fixtures_setup
            .iter()
            .chain(&t.fixtures_cleanup)
            .chain(&t.fixtures_required)
            .map(|f| format!("fixture:{f}"))
            .chain(t.resource_lock.iter().map(|r| format!("lock:{r}")))
            .chain(
                t.depends
                    .iter()
                    .filter(|d| index.contains_key(d.as_str()))
                    .map(|d| format!("test:{d}")),
            )
            .chain(
                shared
                    .get(i)
                    .into_iter()
                    .flatten()
                    .map(|p| format!("path:{p}")),
            );
        for k in keys {
            let j = match k.strip_prefix("test:") {
                Some(d) => index[d],
                None => *by_key.entry(k).or_insert(i),
            };
            let (a, b) = (root(&mut parent, i), root(&mut parent, j));
            if a != b {
                parent[a.max(b)] = a.min(b);
            }
        }
    }
    let mut members: FastMap<usize, Vec<usize>> = FastMap::default();
    for i in 0..tests.len() {
        let r = root(&mut parent, i);
        members.entry(r).or_default().push(i);
    }
    let mut out = std::collections::BTreeMap::new();
    for group in members.values().filter(|g| g.len() > 1) {
        let key = group
            .iter()
            .map(|&i| tests[i].name.as_str())
            .min()
            .unwrap_or("")
            .to_owned();
        for &i in group {
            out.insert(tests[i].name.clone(), key.clone());
        }
    }
    out
}

/// One test selected because another selected test's data reaches it.
#[derive(Clone, Debug)]
pub struct Flow {
    /// Test index.
    pub test: usize,
    /// In words.
    pub detail: String,
}

/// Closes a selection over test-to-test data flow, to a fixed point:
/// * a selected test that sets up or cleans up fixture F selects every test
///   that requires F, and a selected test that requires F selects F's setup
///   and cleanup tests (ctest would add those anyway);
/// * a selected test selects every test that lists it in DEPENDS (it may
///   have written what they read), and the tests it DEPENDS on;
/// * a selected test selects every test that shares a RESOURCE_LOCK with it
///   (a resource held in turn may carry state from one to the other);
/// * a selected test selects every test that names a build-tree path it
///   names that no build step writes (`shared`, per test; see the module).
pub fn data_flow(catalogue: &Catalogue, selected: &[bool], shared: &[Vec<String>]) -> Vec<Flow> {
    let tests = &catalogue.tests;
    let index = name_index(catalogue);
    let mut providers: FastMap<&str, Vec<usize>> = FastMap::default();
    let mut consumers: FastMap<&str, Vec<usize>> = FastMap::default();
    let mut holders: FastMap<&str, Vec<usize>> = FastMap::default();
    let mut namers: FastMap<&str, Vec<usize>> = FastMap::default();
    for (i, paths) in shared.iter().enumerate() {
        for p in paths {
            namers.entry(p.as_str()).or_default().push(i);
        }
    }
    let mut dependents: Vec<Vec<usize>> = vec![Vec::new(); tests.len()];
    for (i, t) in tests.iter().enumerate() {
        for f in t.fixtures_setup.iter().chain(&t.fixtures_cleanup) {
            providers.entry(f.as_str()).or_default().push(i);
        }
        for f in &t.fixtures_required {
            consumers.entry(f.as_str()).or_default().push(i);
        }
        for r in &t.resource_lock {
            holders.entry(r.as_str()).or_default().push(i);
        }
        for d in &t.depends {
            if let Some(&j) = index.get(d.as_str()) {
                dependents[j].push(i);
            }
        }
    }
    let mut sel = selected.to_vec();
    let mut queue: Vec<usize> = (0..tests.len()).filter(|&i| sel[i]).collect();
    let mut out = Vec::new();
    while let Some(i) = queue.pop() {
        let t = &tests[i];
        let mut add = |j: usize, detail: String, sel: &mut Vec<bool>, queue: &mut Vec<usize>| {
            if !sel[j] {
                sel[j] = true;
                queue.push(j);
                out.push(Flow { test: j, detail });
            }
        };
        for f in t.fixtures_setup.iter().chain(&t.fixtures_cleanup) {
            for &j in consumers.get(f.as_str()).into_iter().flatten() {
                add(
                    j,
                    format!(
                        "requires fixture {f:?}, which selected test {:?} sets up or cleans up",
                        t.name
                    ),
                    &mut sel,
                    &mut queue,
                );
            }
        }
        for f in &t.fixtures_required {
            for &j in providers.get(f.as_str()).into_iter().flatten() {
                add(
                    j,
                    format!(
                        "sets up or cleans up fixture {f:?}, which selected test {:?} requires",
                        t.name
                    ),
                    &mut sel,
                    &mut queue,
                );
            }
        }
        for &j in &dependents[i] {
            add(
                j,
                format!(
                    "DEPENDS on selected test {:?}, which may write what it reads",
                    t.name
                ),
                &mut sel,
                &mut queue,
            );
        }
        for d in &t.depends {
            if let Some(&j) = index.get(d.as_str()) {
                add(
                    j,
                    format!("selected test {:?} DEPENDS on it", t.name),
                    &mut sel,
                    &mut queue,
                );
            }
        }
        for r in &t.resource_lock {
            for &j in holders.get(r.as_str()).into_iter().flatten() {
                add(
                    j,
                    format!("shares RESOURCE_LOCK {r:?} with selected test {:?}", t.name),
                    &mut sel,
                    &mut queue,
                );
            }
        }
        for p in shared.get(i).into_iter().flatten() {
            for &j in namers.get(p.as_str()).into_iter().flatten() {
                add(
                    j,
                    format!(
                        "names {p}, which no build step writes and selected test {:?} names too (one may write what the other reads)",
                        t.name
                    ),
                    &mut sel,
                    &mut queue,
                );
            }
        }
    }
    out
}

/// Test name → catalogue index.
fn name_index(catalogue: &Catalogue) -> FastMap<&str, usize> {
    catalogue
        .tests
        .iter()
        .enumerate()
        .map(|(i, t)| (t.name.as_str(), i))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ingest::ctest::Test;

    fn cat(tests: Vec<Test>) -> Catalogue {
        Catalogue { tests, json: None }
    }

    fn t(name: &str) -> Test {
        Test {
            name: name.into(),
            ..Test::default()
        }
    }

    #[test]
    fn data_flow_follows_fixtures_depends_and_locks() {
        let mut setup = t("setup");
        setup.fixtures_setup = vec!["db".into()];
        let mut user = t("user");
        user.fixtures_required = vec!["db".into()];
        let mut after = t("after");
        after.depends = vec!["user".into()];
        let mut l1 = t("l1");
        l1.resource_lock = vec!["port".into()];
        let mut l2 = t("l2");
        l2.resource_lock = vec!["port".into()];
        let other = t("other");
        let c = cat(vec![setup, user, after, l1, l2, other]);
        let sel = |s: &[usize]| {
            let mut v = vec![false; 6];
            for &i in s {
                v[i] = true;
            }
            let mut got: Vec<usize> = data_flow(&c, &v, &[]).iter().map(|f| f.test).collect();
            got.sort();
            got
        };
        assert_eq!(sel(&[0]), vec![1, 2]);
        assert_eq!(sel(&[1]), vec![0, 2]);
        assert_eq!(sel(&[2]), vec![0, 1]);
        assert_eq!(sel(&[3]), vec![4]);
        assert_eq!(sel(&[5]), Vec::<usize>::new());
    }
}
