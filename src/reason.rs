//! The evidence vocabulary: stable reason codes and the gaps that carry them.
//!
//! Every way in which evidence can fail to vouch for a subset is one variant
//! of [`Code`]. A code is a promise to users (CI scripts grep for them), so the
//! list is frozen by a test: renaming one is a reviewed change.
//!
//! Each code knows which outcome it forces. Codes only ever move a run
//! *towards* safety: there is no code that re-enables a subset.

use std::fmt;

/// How much trust a gap removes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Severity {
    /// The catalogue is fine, but a subset cannot be defended: every known test runs.
    FullSuite,
    /// The catalogue itself cannot be trusted: no test list can be emitted at all.
    CatalogueUntrusted,
}

macro_rules! codes {
    ($( $variant:ident => $code:literal, $sev:ident, $doc:literal; )*) => {
        /// A stable reason code. See `SAFETY-CONTRACT.md` for each one's meaning.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
        pub enum Code { $( #[doc = $doc] $variant, )* }

        impl Code {
            /// Every code, in declaration order.
            pub const ALL: &'static [Code] = &[ $( Code::$variant, )* ];

            /// The stable upper-case code printed on stderr and in plans.
            pub fn as_str(self) -> &'static str {
                match self { $( Code::$variant => $code, )* }
            }

            /// The outcome this gap forces on its own.
            pub fn severity(self) -> Severity {
                match self { $( Code::$variant => Severity::$sev, )* }
            }

            /// One-line human explanation of the code.
            pub fn explanation(self) -> &'static str {
                match self { $( Code::$variant => $doc, )* }
            }
        }
    };
}

codes! {
    // --- CTest catalogue (contract §4 rows 1-5) ---
    CtestUnreadable => "CTEST_UNREADABLE", CatalogueUntrusted,
        "the CTest catalogue file is absent or unreadable, so the suite cannot be enumerated";
    CtestMalformed => "CTEST_MALFORMED", CatalogueUntrusted,
        "the CTest catalogue is not valid ctestInfo JSON";
    CtestUnsupportedVersion => "CTEST_UNSUPPORTED_VERSION", CatalogueUntrusted,
        "the CTest catalogue has a kind or major version this tool does not support";
    CtestDuplicateName => "CTEST_DUPLICATE_NAME", CatalogueUntrusted,
        "two registered tests share a name, so the catalogue is ambiguous";
    CtestEmptyName => "CTEST_EMPTY_NAME", CatalogueUntrusted,
        "a registered test has an empty name";
    CtestSuspiciousName => "CTEST_SUSPICIOUS_NAME", CatalogueUntrusted,
        "a test name contains control characters or surrounding whitespace that ctest -R cannot address reliably";
    CtestNoTestfile => "CTEST_NO_TESTFILE", CatalogueUntrusted,
        "the catalogue lists no tests and the build tree has no CTestTestfile.cmake, so an empty suite cannot be told from a missing one";
    CtestCatalogueEmpty => "CTEST_CATALOGUE_EMPTY", CatalogueUntrusted,
        "the catalogue lists no tests although the build registers tests or builds executables: it was listed in the wrong directory or without -C (list it in the build dir: ctest [-C <config>] --show-only=json-v1)";
    CtestCatalogueForeign => "CTEST_CATALOGUE_FOREIGN", CatalogueUntrusted,
        "no test of the catalogue runs in, or runs a program of, this build tree: it was listed from another build (list it in this build dir: ctest [-C <config>] --show-only=json-v1)";
    CtestCatalogueStale => "CTEST_CATALOGUE_STALE", CatalogueUntrusted,
        "the catalogue was listed before the last configure, or before a program whose tests a build step registers (gtest_discover_tests) was rebuilt, so it may not list the suite ctest would run";
    CtestConfigMissing => "CTEST_CONFIG_MISSING", CatalogueUntrusted,
        "the build uses a multi-config generator and the catalogue was listed without -C, so ctest left out every configuration-specific test (list it with ctest -C <config> --show-only=json-v1)";
    TestCommandMissing => "TEST_COMMAND_MISSING", FullSuite,
        "a test has no command (its executable was not built or does not exist)";
    TestCommandUnmapped => "TEST_COMMAND_UNMAPPED", FullSuite,
        "a test's command[0] is not exactly one target artifact (wrapper, interpreter, emulator or foreign program)";
    TestCommandAmbiguous => "TEST_COMMAND_AMBIGUOUS", FullSuite,
        "a test's command[0] matches the artifacts of more than one target";
    TestConfigMismatch => "TEST_CONFIG_MISMATCH", FullSuite,
        "the catalogue was listed for a different configuration than the codemodel one selected";
    // --- File API (contract §4 rows 6-12) ---
    FileApiReplyMissing => "FILE_API_REPLY_MISSING", FullSuite,
        "no File API codemodel-v2 reply exists under BUILD/.cmake/api/v1/reply (add the query and re-run cmake)";
    FileApiIndexAmbiguous => "FILE_API_INDEX_AMBIGUOUS", FullSuite,
        "the File API reply index cannot be chosen unambiguously";
    FileApiReplyStale => "FILE_API_REPLY_STALE", FullSuite,
        "the File API reply is older than its own inputs or a later failed configure";
    FileApiMalformed => "FILE_API_MALFORMED", FullSuite,
        "a File API reply file is missing required structure or is not valid JSON";
    FileApiUnsupportedVersion => "FILE_API_UNSUPPORTED_VERSION", FullSuite,
        "a File API object has an unsupported major version";
    RootMismatch => "ROOT_MISMATCH", FullSuite,
        "the codemodel's source/build roots are not the directories given on the command line";
    ConfigAmbiguous => "CONFIG_AMBIGUOUS", FullSuite,
        "the codemodel has several configurations and --config was not given";
    ConfigNotFound => "CONFIG_NOT_FOUND", FullSuite,
        "the configuration named by --config is not in the codemodel";
    TargetObjectMissing => "TARGET_OBJECT_MISSING", FullSuite,
        "a target object referenced by the codemodel is missing or malformed";
    TargetDependencyUnknown => "TARGET_DEPENDENCY_UNKNOWN", FullSuite,
        "a target dependency id does not resolve to a known target";
    GeneratedSource => "GENERATED_SOURCE", FullSuite,
        "a test depends on a target that compiles a build-time generated source or includes a generated header whose generator inputs are not in the evidence";
    UnknownLinkInput => "UNKNOWN_LINK_INPUT", FullSuite,
        "a test depends on a target that links a library inside the build tree that no known target produces";
    UnsupportedLanguage => "UNSUPPORTED_LANGUAGE", FullSuite,
        "a test depends on a target with compiled sources in a language without trusted dependency evidence";
    UnsupportedGenerator => "UNSUPPORTED_GENERATOR", FullSuite,
        "the build tree was generated by a CMake generator whose dependency evidence is not supported (supported: Unix Makefiles, Ninja, Ninja Multi-Config)";
    // --- dependency files (contract §4 rows 13-19) ---
    DepListUnreadable => "DEP_LIST_UNREADABLE", FullSuite,
        "the --dep-list file is absent or unreadable";
    DepFileUnreadable => "DEP_FILE_UNREADABLE", FullSuite,
        "a listed dependency file is absent or unreadable";
    DepFileMalformed => "DEP_FILE_MALFORMED", FullSuite,
        "a listed dependency file is not a well-formed compiler depfile";
    DepFileDuplicate => "DEP_FILE_DUPLICATE", FullSuite,
        "a dependency file is listed twice, or two depfiles describe one translation unit";
    DepFileUnmapped => "DEP_FILE_UNMAPPED", FullSuite,
        "a dependency file cannot be mapped to exactly one (target, source) translation unit";
    DepPrereqUninspectable => "DEP_PREREQ_UNINSPECTABLE", FullSuite,
        "a project prerequisite's or depfile's timestamp cannot be read";
    DepEvidenceStale => "DEP_EVIDENCE_STALE", FullSuite,
        "a project prerequisite is newer than the dependency file that lists it";
    DepCoverageIncomplete => "DEP_COVERAGE_INCOMPLETE", FullSuite,
        "a compiled translation unit has no dependency file in the list";
    DepSystemHeadersOmitted => "DEP_SYSTEM_HEADERS_OMITTED", FullSuite,
        "a unit of a target that searches a SYSTEM include directory inside the source or build tree has dependency evidence that lists no system header: it was written with -MMD or -MM, which leave out every header found through a SYSTEM directory and all it includes";
    DepsLogMalformed => "DEPS_LOG_MALFORMED", FullSuite,
        "a ninja deps log (.ninja_deps) in the dependency list has an unsupported version, a bad checksum, an undefined id or a truncated record";
    DepsLogMissing => "DEPS_LOG_MISSING", FullSuite,
        "the build uses a Ninja generator, which folds compiler depfiles into BUILD/.ninja_deps, and the dependency list names no deps log (add BUILD/.ninja_deps to it)";
    // --- changed paths (contract §4 rows 20-22, 25) ---
    ChangeUnknown => "CHANGE_UNKNOWN", FullSuite,
        "a changed path is not in the dependency evidence; it may feed generation, configuration or a test at run time";
    ChangeDeleted => "CHANGE_DELETED", FullSuite,
        "a changed path does not exist in the source tree (deleted or renamed away), so current evidence cannot map it";
    ChangeBuildConfig => "CHANGE_BUILD_CONFIG", FullSuite,
        "a build-configuration file changed, so the build graph itself may change";
    ChangeExternalResource => "CHANGE_EXTERNAL_RESOURCE", FullSuite,
        "a lockfile, preset or package-manager configuration changed; it may change any dependency";
    ChangeNotUtf8 => "CHANGE_NOT_UTF8", FullSuite,
        "a changed path is not valid UTF-8 and cannot be compared with the evidence";
    PathEscapesRoot => "PATH_ESCAPES_ROOT", FullSuite,
        "a path resolves outside the declared source/build roots";
    // --- graph (contract §4 rows 23-24 and our additions) ---
    RuntimeLoadedTarget => "RUNTIME_LOADED_TARGET", FullSuite,
        "a program or library that a test may run or load exists but cannot be read, so which programs and libraries it loads by name is unknown";
    TestReadsUnknownBuildFile => "TEST_READS_UNKNOWN_BUILD_FILE", FullSuite,
        "a test names a build-tree file that a build step wrote after configure and that no target in the evidence produces, so what it depends on is unknown";
    PrereqNotVersioned => "PREREQ_NOT_VERSIONED", FullSuite,
        "a source-tree prerequisite in the dependency evidence is git-ignored or untracked, so the change source cannot vouch that it did not change";
    SnapshotInvalid => "SNAPSHOT_INVALID", FullSuite,
        "the base snapshot (--base-snapshot), or the evidence needed to fingerprint this build, cannot be read or is not a diff2test.snapshot.v1 document";
    SnapshotMismatch => "SNAPSHOT_MISMATCH", FullSuite,
        "the base snapshot describes another commit, generator, configuration, build layout or tool version, so its fingerprints cannot be compared with this build's";
    // --- policy ---
    PolicyLabelUncovered => "POLICY_LABEL_UNCOVERED", FullSuite,
        "a policy rule requires a label that no registered test carries (insufficient coverage)";
    PolicyTestUnknown => "POLICY_TEST_UNKNOWN", FullSuite,
        "a policy always_run entry names a test that is not registered";
    PolicyBoundaryContradicted => "POLICY_BOUNDARY_CONTRADICTED", FullSuite,
        "a changed path falls under a policy [[boundary]] that the evidence contradicts (it covers a CMake input, a path a test names, or this path's own evidence), so the boundary is not applied";
    // --- limits and internals ---
    LimitExceeded => "LIMIT_EXCEEDED", FullSuite,
        "an input exceeded a configured size limit, so the analysis cannot safely finish";
    CtestLimitExceeded => "CTEST_LIMIT_EXCEEDED", CatalogueUntrusted,
        "the CTest catalogue exceeded a configured size limit, so the suite cannot be enumerated";
}

impl Code {
    /// What to do about it, in one line (printed once per code on stderr,
    /// shown in the markdown summary, listed in SAFETY-CONTRACT.md).
    pub fn remedy(self) -> &'static str {
        use Code::*;
        match self {
            CtestUnreadable => "write the catalogue in the build dir: (cd BUILD && ctest --show-only=json-v1 > ctest.json), and pass that file to --ctest-json",
            CtestMalformed => "re-list the catalogue with ctest --show-only=json-v1 (stdout only, nothing else appended)",
            CtestUnsupportedVersion => "use a ctest whose --show-only=json-v1 writes ctestInfo major version 1 (CMake 3.14 to 4.x)",
            CtestDuplicateName | CtestEmptyName => "give every add_test a unique, non-empty NAME",
            CtestSuspiciousName => "rename the test: no leading or trailing whitespace and no control characters",
            CtestNoTestfile => "run ctest --show-only=json-v1 inside the configured build dir (it must hold CTestTestfile.cmake)",
            CtestCatalogueEmpty | CtestCatalogueForeign => "list the catalogue in this build dir: (cd BUILD && ctest [-C <config>] --show-only=json-v1 > ctest.json)",
            CtestCatalogueStale => "list the catalogue after the build, as the last step before diff2test: (cd BUILD && ctest [-C <config>] --show-only=json-v1 > ctest.json)",
            CtestConfigMissing => "list the catalogue of one configuration: (cd BUILD && ctest -C <config> --show-only=json-v1) and pass --config <config>",
            CtestLimitExceeded => "raise --max-tests (or --max-file-bytes) if the catalogue is genuine",
            TestCommandMissing => "build every test's executable before listing the catalogue (ctest leaves out the command of an unbuilt one)",
            TestCommandUnmapped => "run the test's executable target directly (add_test(NAME n COMMAND target ...)), or declare what its script runs with a [[script]] rule, or use opaque = \"select\"",
            TestCommandAmbiguous => "give each executable target its own output path",
            TestConfigMismatch => "pass --config with the configuration ctest -C listed",
            FileApiReplyMissing => "write the query before configuring: mkdir -p BUILD/.cmake/api/v1/query && touch BUILD/.cmake/api/v1/query/codemodel-v2 BUILD/.cmake/api/v1/query/cmakeFiles-v1, then re-run cmake",
            FileApiIndexAmbiguous => "re-run cmake once and wait for it to finish before analysing",
            FileApiReplyStale => "re-run cmake (the last configure failed or its inputs changed since)",
            FileApiMalformed | TargetObjectMissing => "re-run cmake to rewrite the File API reply",
            FileApiUnsupportedVersion => "use CMake 3.20 to 4.x (codemodel major 2, cmakeFiles major 1)",
            RootMismatch => "pass the --source-dir and --build-dir the build was configured with",
            ConfigAmbiguous => "pass --config <name> (and list the catalogue with ctest -C <name>)",
            ConfigNotFound => "pass --config with one of the configurations the reply lists (see the reason)",
            TargetDependencyUnknown => "re-run cmake; if it persists, the reply is damaged",
            GeneratedSource => "make the evidence of the custom command that writes it complete (the reason says what is missing: declare its OUTPUT/BYPRODUCTS and DEPENDS, give it a DEPFILE, run programs that are targets), or use opaque = \"select\" to force only those tests",
            UnknownLinkInput => "build the library as a target of this project, or link it by an imported target the codemodel shows",
            UnsupportedLanguage => "nothing to configure: only C and C++ units (and assembly on Ninja, unless it uses .include or .incbin) have trusted dependency evidence",
            UnsupportedGenerator => "configure with -G \"Unix Makefiles\", -G Ninja or -G \"Ninja Multi-Config\"",
            DepListUnreadable => "build the project first (with CMake >= 3.20, or a Ninja generator) and omit --dep-list: the dependency files are found in BUILD; a --dep-list file must list every CMakeFiles/<target>.dir/**/*.d (and BUILD/.ninja_deps with Ninja), absolute",
            DepFileUnreadable | DepFileMalformed => "rebuild, then regenerate the dependency list (a listed file is missing or damaged)",
            DepFileDuplicate => "list each dependency file once",
            DepFileUnmapped => "list only the compilers' .d files under BUILD/CMakeFiles/<target>.dir/ (absolute paths), and BUILD/.ninja_deps for Ninja",
            DepPrereqUninspectable | DepEvidenceStale => "rebuild before running diff2test (the evidence is older than the sources)",
            DepCoverageIncomplete => "build every target tests can run or load, then regenerate the dependency list",
            DepSystemHeadersOmitted => "compile with -MD, CMake's default (do not set CMAKE_DEPFILE_FLAGS_<LANG> or compile options to -MMD or -MM), rebuild, then regenerate the dependency list",
            DepsLogMalformed => "rebuild with ninja (ninja -t recompact rewrites the log), then run diff2test",
            DepsLogMissing => "add BUILD/.ninja_deps to the dependency list (absolute path)",
            ChangeUnknown => "declare a [[boundary]] (no build step or test reads it) or a [[data]] rule for such paths, if that is true",
            ChangeDeleted => "nothing to fix: a deleted path cannot be mapped (declare a [[boundary]] if no build step or test read it)",
            ChangeBuildConfig => "pass the base commit's `diff2test snapshot` as --base-snapshot: CMake edits and files configure reads are then decided by what each test's build description holds (without it, the full suite)",
            ChangeExternalResource => "nothing to fix: a dependency manifest or preset changed (run the full suite)",
            ChangeNotUtf8 => "rename the path to valid UTF-8",
            PathEscapesRoot => "pass changed paths inside --source-dir or the repository holding it (relative to --source-dir, or absolute)",
            RuntimeLoadedTarget => "make the named program or library readable by the user running diff2test",
            TestReadsUnknownBuildFile => "produce the file with add_custom_command(OUTPUT ...) so the codemodel shows its producer, or use opaque = \"select\"",
            PrereqNotVersioned => "track the file in git, or pass the change set explicitly (--changed/--changed-from)",
            PolicyLabelUncovered => "label at least one test with the required label, or fix the policy rule",
            PolicyTestUnknown => "fix the test name in always_run.tests",
            PolicyBoundaryContradicted => "narrow or remove the [[boundary]] the reason names: it covers a path the evidence shows a build step or a test reads",
            LimitExceeded => "raise the limit named in the reason if the input is genuine",
            SnapshotInvalid => "pass the file `diff2test snapshot` wrote for the base commit's build (diff2test.snapshot.v1)",
            SnapshotMismatch => "make the base snapshot from the --base commit, with the same generator, configuration, build layout and diff2test version",
        }
    }

    /// What the user must fix first comes first (contract §7): 0 = the setup
    /// (a catalogue, reply, generator, configuration or dependency list that
    /// is missing, foreign or unsupported; a limit; the policy), 1 = evidence
    /// that is stale, inconsistent or incomplete (rebuild), 2 = the change
    /// itself, 3 = one test or target the model cannot see through.
    pub fn rank(self) -> u8 {
        use Code::*;
        match self {
            CtestUnreadable
            | CtestMalformed
            | CtestUnsupportedVersion
            | CtestDuplicateName
            | CtestEmptyName
            | CtestSuspiciousName
            | CtestNoTestfile
            | CtestCatalogueEmpty
            | CtestCatalogueForeign
            | CtestConfigMissing
            | CtestLimitExceeded
            | FileApiReplyMissing
            | FileApiUnsupportedVersion
            | RootMismatch
            | ConfigAmbiguous
            | ConfigNotFound
            | TestConfigMismatch
            | UnsupportedGenerator
            | DepListUnreadable
            | DepsLogMissing
            | LimitExceeded
            | PolicyLabelUncovered
            | PolicyTestUnknown
            | PolicyBoundaryContradicted
            | SnapshotInvalid
            | SnapshotMismatch => 0,
            FileApiIndexAmbiguous
            | CtestCatalogueStale
            | FileApiReplyStale
            | FileApiMalformed
            | TargetObjectMissing
            | TargetDependencyUnknown
            | DepFileUnreadable
            | DepFileMalformed
            | DepFileDuplicate
            | DepFileUnmapped
            | DepPrereqUninspectable
            | DepEvidenceStale
            | DepCoverageIncomplete
            | DepSystemHeadersOmitted
            | DepsLogMalformed => 1,
            ChangeUnknown
            | ChangeDeleted
            | ChangeBuildConfig
            | ChangeExternalResource
            | ChangeNotUtf8
            | PathEscapesRoot
            | PrereqNotVersioned => 2,
            TestCommandMissing
            | TestCommandUnmapped
            | TestCommandAmbiguous
            | GeneratedSource
            | UnknownLinkInput
            | UnsupportedLanguage
            | RuntimeLoadedTarget
            | TestReadsUnknownBuildFile => 3,
        }
    }
}

/// One concrete reason why a subset cannot be defended: a code plus the exact
/// path or name involved.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Gap {
    /// Stable code.
    pub code: Code,
    /// The concrete path, name or value involved, in words.
    pub detail: String,
}

impl Gap {
    /// A gap with a detail line.
    pub fn new(code: Code, detail: impl Into<String>) -> Self {
        Gap {
            code,
            detail: detail.into(),
        }
    }
}

impl fmt::Display for Gap {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.code.as_str(), self.detail)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_are_unique_and_upper_snake() {
        let mut seen = std::collections::BTreeSet::new();
        for c in Code::ALL {
            let s = c.as_str();
            assert!(seen.insert(s), "duplicate code {s}");
            assert!(
                s.chars()
                    .all(|ch| ch.is_ascii_uppercase() || ch == '_' || ch.is_ascii_digit()),
                "{s}"
            );
            assert!(!c.explanation().is_empty());
        }
    }

    #[test]
    fn every_code_has_a_one_line_remedy() {
        for c in Code::ALL {
            let r = c.remedy();
            assert!(!r.trim().is_empty(), "{} has no remedy", c.as_str());
            assert!(!r.contains('\n'), "{}'s remedy is not one line", c.as_str());
        }
    }

    #[test]
    fn codes_frozen() {
        let codes: Vec<_> = Code::ALL
            .iter()
            .map(|c| format!("{} {:?}", c.as_str(), c.severity()))
            .collect();
        insta::assert_snapshot!(codes.join("\n"));
    }
}
