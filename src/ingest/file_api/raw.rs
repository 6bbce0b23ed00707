//! The File API's JSON as it is on the wire: index, codemodel, target,
//! cmakeFiles and toolchains objects, deserialized strictly (a member given
//! twice is malformed) and borrowing strings where they need no unescaping.

use serde::Deserialize;
use std::borrow::Cow;

use super::glob::ConfigGlob;

#[derive(Deserialize)]
pub(super) struct RawVersion {
    pub(super) major: u64,
    #[serde(default)]
    pub(super) minor: Option<u64>,
}

#[derive(Deserialize)]
pub(super) struct RawIndex {
    pub(super) cmake: RawIndexCmake,
    pub(super) objects: Vec<RawObjectRef>,
    #[serde(default)]
    pub(super) reply: Option<StrictObject>,
}

/// A JSON object (at any depth) that rejects duplicate keys, unlike
/// `serde_json::Map`, where the last duplicate silently wins.
pub(super) struct StrictObject(pub(super) serde_json::Map<String, serde_json::Value>);

pub(super) struct StrictValue(serde_json::Value);

impl<'de> Deserialize<'de> for StrictValue {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> serde::de::Visitor<'de> for V {
            type Value = StrictValue;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("any JSON value without duplicate object keys")
            }
            fn visit_bool<E>(self, v: bool) -> Result<StrictValue, E> {
                Ok(StrictValue(v.into()))
            }
            fn visit_i64<E>(self, v: i64) -> Result<StrictValue, E> {
                Ok(StrictValue(v.into()))
            }
            fn visit_u64<E>(self, v: u64) -> Result<StrictValue, E> {
                Ok(StrictValue(v.into()))
            }
            fn visit_f64<E>(self, v: f64) -> Result<StrictValue, E> {
                Ok(StrictValue(serde_json::Number::from_f64(v).map_or(
                    serde_json::Value::Null,
                    serde_json::Value::Number,
                )))
            }
            fn visit_str<E>(self, v: &str) -> Result<StrictValue, E> {
                Ok(StrictValue(v.into()))
            }
            fn visit_string<E>(self, v: String) -> Result<StrictValue, E> {
                Ok(StrictValue(v.into()))
            }
            fn visit_unit<E>(self) -> Result<StrictValue, E> {
                Ok(StrictValue(serde_json::Value::Null))
            }
            fn visit_seq<A: serde::de::SeqAccess<'de>>(
                self,
                mut a: A,
            ) -> Result<StrictValue, A::Error> {
                let mut v = Vec::new();
                while let Some(StrictValue(x)) = a.next_element()? {
                    v.push(x);
                }
                Ok(StrictValue(serde_json::Value::Array(v)))
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                mut a: A,
            ) -> Result<StrictValue, A::Error> {
                let mut m = serde_json::Map::new();
                while let Some((k, StrictValue(x))) = a.next_entry::<String, StrictValue>()? {
                    if m.contains_key(&k) {
                        return Err(serde::de::Error::custom(format!("duplicate key {k:?}")));
                    }
                    m.insert(k, x);
                }
                Ok(StrictValue(serde_json::Value::Object(m)))
            }
        }
        d.deserialize_any(V)
    }
}

impl<'de> Deserialize<'de> for StrictObject {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        match StrictValue::deserialize(d)?.0 {
            serde_json::Value::Object(m) => Ok(StrictObject(m)),
            _ => Err(serde::de::Error::custom("expected an object")),
        }
    }
}

#[derive(Deserialize)]
pub(super) struct RawIndexCmake {
    pub(super) generator: RawGenerator,
    #[serde(default)]
    pub(super) version: Option<RawCmakeVersion>,
    #[serde(default)]
    pub(super) paths: Option<RawCmakePaths>,
}

/// `cmake.version` of the reply index: the CMake that configured the build.
#[derive(Deserialize)]
pub(super) struct RawCmakeVersion {
    #[serde(default)]
    pub(super) major: Option<u64>,
    #[serde(default)]
    pub(super) minor: Option<u64>,
}

/// `cmake.paths` of the reply index (every version since the File API's
/// first): the programs of the CMake that configured the build.
#[derive(Deserialize)]
pub(super) struct RawCmakePaths {
    #[serde(default)]
    pub(super) cmake: Option<String>,
}

#[derive(Deserialize)]
pub(super) struct RawGenerator {
    pub(super) name: String,
    #[serde(default, rename = "multiConfig")]
    pub(super) multi_config: Option<bool>,
}

#[derive(Deserialize)]
pub(super) struct RawObjectRef {
    pub(super) kind: String,
    pub(super) version: RawVersion,
    #[serde(rename = "jsonFile")]
    pub(super) json_file: String,
}

#[derive(Deserialize)]
pub(super) struct RawCodemodel {
    pub(super) kind: String,
    pub(super) version: RawVersion,
    pub(super) paths: RawPaths,
    pub(super) configurations: Vec<RawConfiguration>,
}

#[derive(Deserialize)]
pub(super) struct RawPaths {
    pub(super) source: String,
    pub(super) build: String,
}

#[derive(Deserialize)]
pub(super) struct RawConfiguration {
    pub(super) name: String,
    pub(super) targets: Vec<RawTargetRef>,
    #[serde(default, rename = "abstractTargets")]
    pub(super) abstract_targets: Option<Vec<RawTargetRef>>,
}

#[derive(Deserialize)]
pub(super) struct RawTargetRef {
    pub(super) name: String,
    pub(super) id: String,
    #[serde(rename = "jsonFile")]
    pub(super) json_file: String,
}

// Target objects are the bulk of the reply (thousands of files): their strings
// are borrowed from the read buffer where JSON escapes allow it.

#[derive(Deserialize)]
pub(super) struct RawTarget<'a> {
    #[serde(borrow)]
    pub(super) name: Cow<'a, str>,
    #[serde(borrow)]
    pub(super) id: Cow<'a, str>,
    #[serde(rename = "type", borrow)]
    pub(super) kind: Cow<'a, str>,
    #[serde(borrow)]
    pub(super) paths: RawTargetPaths<'a>,
    #[serde(default, borrow)]
    pub(super) artifacts: Option<Vec<RawPathEntry<'a>>>,
    #[serde(default, borrow)]
    pub(super) sources: Option<Vec<RawSource<'a>>>,
    #[serde(default, rename = "compileGroups", borrow)]
    pub(super) compile_groups: Option<Vec<RawCompileGroup<'a>>>,
    #[serde(default, borrow)]
    pub(super) dependencies: Option<Vec<RawDependency<'a>>>,
    #[serde(default, borrow)]
    pub(super) link: Option<RawLink<'a>>,
}

#[derive(Deserialize)]
pub(super) struct RawTargetPaths<'a> {
    #[serde(borrow)]
    #[allow(dead_code)]
    pub(super) source: Cow<'a, str>,
    #[serde(borrow)]
    pub(super) build: Cow<'a, str>,
}

#[derive(Deserialize)]
pub(super) struct RawLink<'a> {
    #[serde(default, rename = "commandFragments", borrow)]
    pub(super) command_fragments: Option<Vec<RawFragment<'a>>>,
}

#[derive(Deserialize)]
pub(super) struct RawFragment<'a> {
    #[serde(borrow)]
    pub(super) fragment: Cow<'a, str>,
    #[serde(default, borrow)]
    pub(super) role: Option<Borrowed<'a>>,
}

/// A string borrowed from the read buffer where JSON escapes allow it. serde
/// borrows a `Cow<str>` only when it is a field's whole type: inside an
/// `Option` it would always allocate, so optional strings use this.
#[derive(Deserialize)]
#[serde(transparent)]
pub(super) struct Borrowed<'a>(#[serde(borrow)] pub(super) Cow<'a, str>);

#[derive(Deserialize)]
pub(super) struct RawPathEntry<'a> {
    #[serde(borrow)]
    pub(super) path: Cow<'a, str>,
}

#[derive(Deserialize)]
pub(super) struct RawSource<'a> {
    #[serde(borrow)]
    pub(super) path: Cow<'a, str>,
    #[serde(default, rename = "compileGroupIndex")]
    pub(super) compile_group_index: Option<usize>,
    #[serde(default, rename = "isGenerated")]
    pub(super) is_generated: Option<bool>,
}

#[derive(Deserialize)]
pub(super) struct RawCompileGroup<'a> {
    #[serde(borrow)]
    pub(super) language: Cow<'a, str>,
    #[serde(default, borrow)]
    pub(super) defines: Option<Vec<RawDefine<'a>>>,
    #[serde(default, rename = "compileCommandFragments", borrow)]
    pub(super) compile_command_fragments: Option<Vec<RawFragment<'a>>>,
    #[serde(default, borrow)]
    pub(super) includes: Option<Vec<RawInclude<'a>>>,
}

#[derive(Deserialize)]
pub(super) struct RawInclude<'a> {
    #[serde(borrow)]
    pub(super) path: Cow<'a, str>,
    #[serde(default, rename = "isSystem")]
    pub(super) is_system: Option<bool>,
}

#[derive(Deserialize)]
pub(super) struct RawDefine<'a> {
    #[serde(borrow)]
    pub(super) define: Cow<'a, str>,
}

#[derive(Deserialize)]
pub(super) struct RawDependency<'a> {
    #[serde(borrow)]
    pub(super) id: Cow<'a, str>,
}

#[derive(Deserialize)]
pub(super) struct RawCmakeFiles {
    pub(super) kind: String,
    pub(super) version: RawVersion,
    pub(super) inputs: Vec<RawCmakeInput>,
    /// cmakeFiles 1.1 (CMake 3.30+): the `CONFIGURE_DEPENDS` globs.
    #[serde(default, rename = "globsDependent")]
    pub(super) globs_dependent: Option<Vec<RawGlobDependent>>,
}

#[derive(Deserialize)]
pub(super) struct RawGlobDependent {
    pub(super) expression: String,
    #[serde(default)]
    pub(super) recurse: Option<bool>,
    #[serde(default, rename = "listDirectories")]
    pub(super) list_directories: Option<bool>,
    #[serde(default, rename = "followSymlinks")]
    pub(super) follow_symlinks: Option<bool>,
    #[serde(default)]
    pub(super) relative: Option<String>,
    #[serde(default)]
    pub(super) paths: Option<Vec<String>>,
}

impl RawGlobDependent {
    pub(super) fn convert(&self, source_root: &str) -> ConfigGlob {
        ConfigGlob::new(
            &self.expression,
            source_root,
            self.recurse == Some(true),
            self.list_directories == Some(true),
            self.follow_symlinks == Some(true),
            self.relative.as_deref(),
            self.paths.as_deref().unwrap_or_default(),
        )
    }
}

#[derive(Deserialize)]
pub(super) struct RawToolchains {
    pub(super) kind: String,
    pub(super) version: RawVersion,
    pub(super) toolchains: Vec<RawToolchain>,
}

#[derive(Deserialize)]
pub(super) struct RawToolchain {
    #[serde(default)]
    pub(super) compiler: Option<RawCompiler>,
}

#[derive(Deserialize)]
pub(super) struct RawCompiler {
    #[serde(default)]
    pub(super) path: Option<String>,
    #[serde(default)]
    pub(super) implicit: Option<RawImplicit>,
}

#[derive(Deserialize)]
pub(super) struct RawImplicit {
    #[serde(default, rename = "includeDirectories")]
    pub(super) include_directories: Option<Vec<String>>,
}

#[derive(Deserialize)]
pub(super) struct RawCmakeInput {
    pub(super) path: String,
    #[serde(default, rename = "isGenerated")]
    pub(super) is_generated: Option<bool>,
    #[serde(default, rename = "isCMake")]
    pub(super) is_cmake: Option<bool>,
}

// ---------------- loading ----------------
