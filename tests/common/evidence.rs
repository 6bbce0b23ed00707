//! An in-memory evidence builder: a project described in a few lines
//! (targets, their sources, what each unit includes, tests) written as the
//! evidence CMake 3.25's Unix Makefiles generator, the compiler and
//! `ctest --show-only=json-v1` write for it: the File API reply (index,
//! codemodel, targets, cmakeFiles), the CTest catalogue, the `.d` files and
//! the dependency list, with the timestamps of a finished build (sources,
//! then configure, then the build). No CMake runs: tests of *decisions*
//! (what a change selects, which gap ends in the full suite) use it; tests of
//! what CMake really writes, and the soundness oracles, build real projects.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use serde_json::{json, Value};

use super::{run_on, Run};

/// Seconds since the epoch of the sources; configure and the build follow.
const T0: i64 = 1_700_000_000;

/// A target of the project.
struct Target {
    name: String,
    kind: &'static str,
    /// Its directory, relative to the source (and build) root.
    dir: String,
    /// Compiled sources, relative to the source root.
    sources: Vec<String>,
    /// Targets it links.
    links: Vec<String>,
}

/// A test: runs `target`'s artifact with `args`.
struct Test {
    name: String,
    target: String,
    args: Vec<String>,
}

/// A project to write.
#[derive(Default)]
pub struct Project {
    targets: Vec<Target>,
    tests: Vec<Test>,
    /// Source files (relative path, text).
    files: Vec<(String, String)>,
    /// Unit source → the project headers it includes (relative).
    includes: Vec<(String, Vec<String>)>,
    /// Compiled sources without a `.d` file.
    without_depfile: Vec<String>,
}

impl Project {
    /// An empty project.
    pub fn new() -> Self {
        Project::default()
    }

    /// A source file with its text.
    pub fn file(mut self, path: &str, text: &str) -> Self {
        self.files.push((path.to_owned(), text.to_owned()));
        self
    }

    fn target(
        mut self,
        kind: &'static str,
        name: &str,
        dir: &str,
        sources: &[&str],
        links: &[&str],
    ) -> Self {
        for s in sources {
            if !self.files.iter().any(|(p, _)| p == s) {
                self.files.push(((*s).to_owned(), format!("// {s}\n")));
            }
        }
        self.targets.push(Target {
            name: name.to_owned(),
            kind,
            dir: dir.to_owned(),
            sources: sources.iter().map(|s| (*s).to_owned()).collect(),
            links: links.iter().map(|s| (*s).to_owned()).collect(),
        });
        self
    }

    /// A static library `name` in `dir`, compiled from `sources`, linking `links`.
    pub fn library(self, name: &str, dir: &str, sources: &[&str], links: &[&str]) -> Self {
        self.target("STATIC_LIBRARY", name, dir, sources, links)
    }

    /// An executable `name` in `dir`, compiled from `sources`, linking `links`.
    pub fn executable(self, name: &str, dir: &str, sources: &[&str], links: &[&str]) -> Self {
        self.target("EXECUTABLE", name, dir, sources, links)
    }

    /// The unit compiling `source` includes `headers` (the compiler's `.d` lists them).
    pub fn includes(mut self, source: &str, headers: &[&str]) -> Self {
        for h in headers {
            if !self.files.iter().any(|(p, _)| p == h) {
                self.files.push(((*h).to_owned(), format!("// {h}\n")));
            }
        }
        self.includes.push((
            source.to_owned(),
            headers.iter().map(|h| (*h).to_owned()).collect(),
        ));
        self
    }

    /// A test `name` that runs `target`'s executable with `args`.
    pub fn test(mut self, name: &str, target: &str, args: &[&str]) -> Self {
        self.tests.push(Test {
            name: name.to_owned(),
            target: target.to_owned(),
            args: args.iter().map(|a| (*a).to_owned()).collect(),
        });
        self
    }

    /// `source` was never compiled: no `.d` file, no object.
    pub fn without_depfile(mut self, source: &str) -> Self {
        self.without_depfile.push(source.to_owned());
        self
    }

    /// Writes the project's sources and its build's evidence below a new
    /// temporary directory.
    pub fn write(&self) -> Tree {
        let dir = super::scratch_dir("d2t-evidence");
        let root = dir.path().canonicalize().unwrap();
        let (src, build) = (root.join("src"), root.join("build"));
        let tree = Tree {
            _dir: dir,
            src,
            build,
        };
        self.write_sources(&tree);
        self.write_reply(&tree);
        self.write_catalogue(&tree);
        self.write_units(&tree);
        tree
    }

    fn write_sources(&self, t: &Tree) {
        let mut dirs: Vec<&str> = vec![""];
        dirs.extend(self.targets.iter().map(|x| x.dir.as_str()));
        for d in dirs {
            let cml = if d.is_empty() {
                "CMakeLists.txt".to_owned()
            } else {
                format!("{d}/CMakeLists.txt")
            };
            put(
                &t.src.join(cml),
                "# written by tests/common/evidence.rs\n",
                T0,
            );
        }
        for (p, text) in &self.files {
            put(&t.src.join(p), text, T0);
        }
    }

    fn id(&self, name: &str) -> String {
        let i = self
            .targets
            .iter()
            .position(|t| t.name == name)
            .expect("a target of the project");
        format!("{name}::@{i:020}")
    }

    fn artifact(t: &Target) -> String {
        let file = match t.kind {
            "EXECUTABLE" => t.name.clone(),
            _ => format!("lib{}.a", t.name),
        };
        if t.dir.is_empty() {
            file
        } else {
            format!("{}/{file}", t.dir)
        }
    }

    /// The object of `source` (relative to the build root), as the Makefiles generator names it.
    fn object(t: &Target, source: &str) -> String {
        let below = source
            .strip_prefix(&format!("{}/", t.dir))
            .filter(|_| !t.dir.is_empty())
            .unwrap_or(source);
        let obj = format!("CMakeFiles/{}.dir/{below}.o", t.name);
        if t.dir.is_empty() {
            obj
        } else {
            format!("{}/{obj}", t.dir)
        }
    }

    fn write_reply(&self, t: &Tree) {
        let reply = t.build.join(".cmake/api/v1/reply");
        let (src, build) = (t.src.to_str().unwrap(), t.build.to_str().unwrap());
        let configured = T0 + 100;
        put(
            &t.build.join(".cmake/api/v1/query/codemodel-v2"),
            "",
            configured,
        );
        put(
            &t.build.join(".cmake/api/v1/query/cmakeFiles-v1"),
            "",
            configured,
        );
        let mut dirs: Vec<String> = vec![".".into()];
        for x in &self.targets {
            let d = if x.dir.is_empty() {
                ".".to_owned()
            } else {
                x.dir.clone()
            };
            if !dirs.contains(&d) {
                dirs.push(d);
            }
        }
        let mut targets = Vec::new();
        for (i, x) in self.targets.iter().enumerate() {
            let file = format!("target-{}-Debug-{i:020}.json", x.name);
            let d = if x.dir.is_empty() {
                "."
            } else {
                x.dir.as_str()
            };
            // Every unit includes `dir/header.h` from the project's root.
            let include = src.to_owned();
            let mut v = json!({
                "name": x.name,
                "id": self.id(&x.name),
                "type": x.kind,
                "nameOnDisk": Self::artifact(x).rsplit('/').next().unwrap(),
                "paths": {"source": d, "build": d},
                "artifacts": [{"path": Self::artifact(x)}],
                "compileGroups": [{
                    "language": "CXX",
                    "compileCommandFragments": [{"fragment": "-g"}],
                    "includes": [{"path": include}],
                    "sourceIndexes": (0..x.sources.len()).collect::<Vec<_>>(),
                }],
                "sources": x.sources.iter().map(|s| json!({"path": s, "compileGroupIndex": 0})).collect::<Vec<_>>(),
                "dependencies": x.links.iter().map(|l| json!({"id": self.id(l)})).collect::<Vec<_>>(),
            });
            if x.kind == "EXECUTABLE" {
                let libs: Vec<Value> = (x.links.iter())
                    .map(|l| {
                        let lt = self.targets.iter().find(|t| &t.name == l).unwrap();
                        json!({"fragment": format!("{build}/{}", Self::artifact(lt)), "role": "libraries"})
                    })
                    .collect();
                v["link"] = json!({"language": "CXX", "commandFragments": libs});
            }
            put(&reply.join(&file), &v.to_string(), configured);
            let dir_index = dirs.iter().position(|x| x == d).unwrap();
            targets.push(json!({"name": x.name, "id": self.id(&x.name), "jsonFile": file, "directoryIndex": dir_index, "projectIndex": 0}));
        }
        let directories: Vec<Value> = (dirs.iter())
            .map(|d| json!({"source": d, "build": d, "projectIndex": 0, "minimumCMakeVersion": {"string": "3.20"}}))
            .collect();
        let codemodel = json!({
            "kind": "codemodel",
            "version": {"major": 2, "minor": 4},
            "paths": {"source": src, "build": build},
            "configurations": [{
                "name": "Debug",
                "directories": directories,
                "projects": [{"name": "P", "directoryIndexes": (0..dirs.len()).collect::<Vec<_>>(), "targetIndexes": (0..targets.len()).collect::<Vec<_>>()}],
                "targets": targets,
            }],
        });
        put(
            &reply.join("codemodel-v2-0000.json"),
            &codemodel.to_string(),
            configured,
        );
        let inputs: Vec<Value> = (dirs.iter())
            .map(|d| json!({"path": if d == "." { "CMakeLists.txt".to_owned() } else { format!("{d}/CMakeLists.txt") }}))
            .collect();
        let files = json!({
            "kind": "cmakeFiles",
            "version": {"major": 1, "minor": 0},
            "paths": {"source": src, "build": build},
            "inputs": inputs,
        });
        put(
            &reply.join("cmakeFiles-v1-0000.json"),
            &files.to_string(),
            configured,
        );
        let index = json!({
            "cmake": {
                "generator": {"name": "Unix Makefiles", "multiConfig": false},
                "paths": {"cmake": "/usr/bin/cmake"},
                "version": {"major": 3, "minor": 25, "string": "3.25.1"},
            },
            "objects": [
                {"kind": "codemodel", "version": {"major": 2, "minor": 4}, "jsonFile": "codemodel-v2-0000.json"},
                {"kind": "cmakeFiles", "version": {"major": 1, "minor": 0}, "jsonFile": "cmakeFiles-v1-0000.json"},
            ],
            "reply": {},
        });
        put(
            &reply.join("index-2023-11-14T22-15-00-0000.json"),
            &index.to_string(),
            configured,
        );
        put(
            &t.build.join("CMakeCache.txt"),
            &format!("CMAKE_BUILD_TYPE:STRING=Debug\nCMAKE_HOME_DIRECTORY:INTERNAL={src}\nCMAKE_GENERATOR:INTERNAL=Unix Makefiles\n"),
            configured,
        );
    }

    fn write_catalogue(&self, t: &Tree) {
        let (src, build) = (t.src.to_str().unwrap(), t.build.to_str().unwrap());
        let tests: Vec<Value> = (self.tests.iter())
            .map(|x| {
                let target = self.targets.iter().find(|t| t.name == x.target).expect("a test's target");
                let mut command = vec![format!("{build}/{}", Self::artifact(target))];
                command.extend(x.args.iter().cloned());
                json!({
                    "name": x.name,
                    "command": command,
                    "backtrace": 1,
                    "properties": [{"name": "WORKING_DIRECTORY", "value": format!("{build}/{}", target.dir).trim_end_matches('/')}],
                })
            })
            .collect();
        let catalogue = json!({
            "kind": "ctestInfo",
            "version": {"major": 1, "minor": 0},
            "backtraceGraph": {
                "commands": ["add_test"],
                "files": [format!("{src}/CMakeLists.txt")],
                "nodes": [{"file": 0}, {"command": 0, "file": 0, "line": 1, "parent": 0}],
            },
            "tests": tests,
        });
        put(
            &t.build.join("ctest.json"),
            &serde_json::to_string_pretty(&catalogue).unwrap(),
            T0 + 300,
        );
    }

    fn write_units(&self, t: &Tree) {
        let (src, build) = (t.src.to_str().unwrap(), &t.build);
        let built = T0 + 200;
        let mut list = String::new();
        for x in &self.targets {
            for s in &x.sources {
                if self.without_depfile.contains(s) {
                    continue;
                }
                let obj = Self::object(x, s);
                // `-MT` names the object relative to the top of the build tree.
                let mut d = format!("{obj}: \\\n {src}/{s}");
                let headers = self
                    .includes
                    .iter()
                    .filter(|(u, _)| u == s)
                    .flat_map(|(_, h)| h);
                for h in headers {
                    let _ = write!(d, " \\\n {src}/{h}");
                }
                d.push('\n');
                put(&build.join(&obj), "", built);
                put(&build.join(format!("{obj}.d")), &d, built);
                let _ = writeln!(list, "{}", build.join(format!("{obj}.d")).display());
            }
            put(&build.join(Self::artifact(x)), "", built);
        }
        put(&build.join("deps.txt"), &list, T0 + 300);
    }
}

impl Project {
    /// The same project as CMake sources, below `src`: what a real build of
    /// it writes is what [`Project::write`] writes (tests check so).
    pub fn write_cmake(&self, src: &Path) {
        let mut top = String::from(
            "cmake_minimum_required(VERSION 3.20)\nproject(P CXX)\nenable_testing()\ninclude_directories(${CMAKE_SOURCE_DIR})\n",
        );
        let mut dirs: Vec<&str> = Vec::new();
        for x in &self.targets {
            if !dirs.contains(&x.dir.as_str()) {
                dirs.push(&x.dir);
                let _ = writeln!(top, "add_subdirectory({})", x.dir);
            }
        }
        std::fs::create_dir_all(src).unwrap();
        std::fs::write(src.join("CMakeLists.txt"), top).unwrap();
        for d in dirs {
            let mut text = String::new();
            for x in self.targets.iter().filter(|x| x.dir == d) {
                let sources: Vec<&str> = (x.sources.iter())
                    .map(|s| s.strip_prefix(&format!("{d}/")).unwrap_or(s))
                    .collect();
                let add = match x.kind {
                    "EXECUTABLE" => "add_executable",
                    _ => "add_library",
                };
                let kind = if x.kind == "EXECUTABLE" {
                    ""
                } else {
                    " STATIC"
                };
                let _ = writeln!(text, "{add}({}{kind} {})", x.name, sources.join(" "));
                if !x.links.is_empty() {
                    let _ = writeln!(
                        text,
                        "target_link_libraries({} PRIVATE {})",
                        x.name,
                        x.links.join(" ")
                    );
                }
                for t in self.tests.iter().filter(|t| t.target == x.name) {
                    let _ = writeln!(
                        text,
                        "add_test(NAME {} COMMAND {} {})",
                        t.name,
                        x.name,
                        t.args.join(" ")
                    );
                }
            }
            std::fs::create_dir_all(src.join(d)).unwrap();
            std::fs::write(src.join(d).join("CMakeLists.txt"), text).unwrap();
        }
        for (p, text) in &self.files {
            let path = src.join(p);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, text).unwrap();
        }
    }
}

/// A written project.
pub struct Tree {
    _dir: tempfile::TempDir,
    /// The source root.
    pub src: PathBuf,
    /// The build root.
    pub build: PathBuf,
}

impl Tree {
    /// A tree some other writer (a real build) wrote below `dir`.
    pub fn at(dir: tempfile::TempDir, src: PathBuf, build: PathBuf) -> Tree {
        Tree {
            _dir: dir,
            src,
            build,
        }
    }

    /// diff2test over this tree's evidence with `changed` (relative to the
    /// source root) and `extra` arguments.
    pub fn run(&self, changed: &[&str], extra: &[&str]) -> Run {
        run_on(&self.src, &self.build, changed, extra)
    }

    /// Rewrites source file `path` (relative) with `text`, dated after the build.
    pub fn edit(&self, path: &str, text: &str) {
        put(&self.src.join(path), text, T0 + 1000);
    }
}

/// Writes `text` to `path` (creating its directory) dated `secs`.
fn put(path: &Path, text: &str, secs: i64) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
    let t = filetime::FileTime::from_unix_time(secs, 0);
    filetime::set_file_mtime(path, t).unwrap();
}
