//! From a [`Sidecar`] to the exact launch of its process, plus what the checks need to know
//! about it: the plugin id and the manifest's `runtime` lists.
//!
//! An installed plugin or a package goes through the launch contract (`resolve_launch`, the one
//! the host applies); a command is resolved on `PATH` and is bound only by what the manifest
//! says (the kit is a development tool).

use std::path::{Path, PathBuf};

use sidewire_ext_protocol::v2::ManifestV2;
use sidewire_ext_protocol::{
    ENV_PLUGIN_NAME, ENV_PLUGIN_ROOT, ENV_PLUGIN_VERSION, LaunchSpec, MANIFEST_FILE,
    MAX_MANIFEST_BYTES, Manifest, ProtocolProfile, RuntimeSpec, resolve_launch,
};
use sidewire_process::file::{self, Symlinks};

use crate::Sidecar;
use crate::error::Error;

/// One resolved sidecar.
#[derive(Debug, Clone)]
pub(crate) struct Launch {
    /// How to start it.
    pub(crate) spec: LaunchSpec,
    /// The plugin id (install record, else manifest `name`).
    pub(crate) plugin_id: String,
    /// The manifest's runtime section (lists the host sends and checks against).
    pub(crate) runtime: RuntimeSpec,
    /// The protocol the manifest's `apiVersion` picks (spec delta §1.4 P2).
    pub(crate) profile: ProtocolProfile,
    /// What a v2 manifest declares beyond the v1 model (`None` for a v1 manifest).
    pub(crate) v2: Option<ManifestV2>,
}

/// What the checks need of a manifest: its runtime, its profile and its v2 declarations.
struct Declared {
    runtime: RuntimeSpec,
    profile: ProtocolProfile,
    v2: Option<ManifestV2>,
}

/// Resolves `sidecar`: reads and decodes its manifest, and forms its launch.
pub(crate) async fn resolve(sidecar: &Sidecar) -> Result<Launch, Error> {
    match sidecar {
        Sidecar::Installed { id, root, version } => {
            let root = absolute(root)?;
            let manifest = read_package_manifest(&root)?;
            let declared = runtime_of(id, manifest)?;
            from_manifest(id, &root, version, declared)
        }
        Sidecar::Package(dir) => {
            let root = absolute(dir)?;
            let manifest = read_package_manifest(&root)?;
            let id = manifest.name.clone();
            let version = manifest.version.clone();
            let declared = runtime_of(&id, manifest)?;
            from_manifest(&id, &root, &version, declared)
        }
        Sidecar::Command {
            manifest,
            program,
            args,
        } => {
            let path = absolute(manifest)?;
            // The file named on the command line: a link is followed (it is the user's own
            // choice, like a config file), but only a regular file within the manifest cap is
            // read, without blocking.
            let manifest = read_manifest(&path, Symlinks::Follow)?;
            let id = manifest.name.clone();
            let version = manifest.version.clone();
            let declared = runtime_of(&id, manifest)?;
            let runtime = declared.runtime;
            let root = path
                .parent()
                .map_or_else(|| PathBuf::from("/"), Path::to_path_buf);
            let resolved = sidewire_process::resolve(program, None, Some(&root))
                .await
                .map_err(|error| Error::Program {
                    program: program.clone(),
                    error,
                })?;
            let root_text = root
                .to_str()
                .ok_or_else(|| Error::Io {
                    path: root.clone(),
                    error: std::io::Error::new(
                        std::io::ErrorKind::InvalidData,
                        "the manifest's directory is not UTF-8, so REASONIX_PLUGIN_ROOT would \
                         have no value",
                    ),
                })?
                .to_owned();
            let mut env: Vec<(String, String)> = runtime
                .env
                .iter()
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect();
            if let Some(path) = resolved.path.as_ref().and_then(|p| p.to_str()) {
                env.push(("PATH".to_owned(), path.to_owned()));
            }
            env.push((ENV_PLUGIN_ROOT.to_owned(), root_text));
            env.push((ENV_PLUGIN_NAME.to_owned(), id.clone()));
            env.push((ENV_PLUGIN_VERSION.to_owned(), version));
            Ok(Launch {
                spec: LaunchSpec {
                    command: resolved.program,
                    args: args.clone(),
                    env,
                    cwd: root,
                },
                plugin_id: id,
                runtime,
                profile: declared.profile,
                v2: declared.v2,
            })
        }
    }
}

/// Reads `dir/reasonix-plugin.json` as a host reads a package's: not trusted yet, so a link is
/// followed only to a file inside `dir`.
fn read_package_manifest(dir: &Path) -> Result<Manifest, Error> {
    read_manifest(&dir.join(MANIFEST_FILE), Symlinks::Inside(dir))
}

/// Reads and strictly decodes the manifest at `path`: only a regular file of at most
/// `MAX_MANIFEST_BYTES`, opened without blocking (a FIFO cannot hang the read).
fn read_manifest(path: &Path, symlinks: Symlinks<'_>) -> Result<Manifest, Error> {
    let text = file::read_to_string(path, MAX_MANIFEST_BYTES, symlinks).map_err(Error::File)?;
    Manifest::parse(&text).map_err(|error| Error::Manifest {
        path: path.to_path_buf(),
        error,
    })
}

fn absolute(path: &Path) -> Result<PathBuf, Error> {
    std::path::absolute(path).map_err(|error| Error::Io {
        path: path.to_path_buf(),
        error,
    })
}

fn runtime_of(id: &str, manifest: Manifest) -> Result<Declared, Error> {
    let profile = manifest.profile();
    let runtime = manifest.runtime.ok_or_else(|| Error::NoRuntime {
        plugin: id.to_owned(),
    })?;
    Ok(Declared {
        runtime,
        profile,
        v2: manifest.v2.map(|v2| *v2),
    })
}

fn from_manifest(
    id: &str,
    root: &Path,
    version: &str,
    declared: Declared,
) -> Result<Launch, Error> {
    let Declared {
        runtime,
        profile,
        v2,
    } = declared;
    let spec = resolve_launch(id, root, version, &runtime).map_err(|refused| Error::Refused {
        plugin: id.to_owned(),
        refused,
    })?;
    Ok(Launch {
        spec,
        plugin_id: id.to_owned(),
        runtime,
        profile,
        v2,
    })
}
