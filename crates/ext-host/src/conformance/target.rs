//! From a [`Target`] to the exact launch of its sidecar, plus what the checks need to know
//! about it: the plugin id and the manifest's `runtime` lists.

use std::path::{Path, PathBuf};

use sidewire_ext_protocol::{LaunchSpec, Manifest, RuntimeSpec, resolve_launch};

use super::Target;
use crate::error::Error;
use crate::package::Package;
use crate::store::PluginStore;

/// One resolved target.
#[derive(Debug, Clone)]
pub(crate) struct Launch {
    /// How to start it.
    pub(crate) spec: LaunchSpec,
    /// The plugin id (install record, else manifest `name`).
    pub(crate) plugin_id: String,
    /// The manifest's runtime section (lists the host sends and checks against).
    pub(crate) runtime: RuntimeSpec,
}

/// Resolves `target`; the errors are the host's own (not installed, manifest, refused launch)
/// or [`Error::Conformance`].
pub(crate) async fn resolve(target: &Target) -> Result<Launch, Error> {
    match target {
        Target::Installed { state_dir, id } => {
            let plugin = PluginStore::new(state_dir)
                .get(id)?
                .ok_or_else(|| Error::NotInstalled(id.clone()))?;
            let package = Package::open(&plugin.root)?;
            let runtime = runtime_of(id, package.manifest)?;
            from_manifest(id, &plugin.root, &plugin.version, runtime)
        }
        Target::Package(dir) => {
            let root = absolute(dir)?;
            let package = Package::open(&root)?;
            let id = package.manifest.name.clone();
            let version = package.manifest.version.clone();
            let runtime = runtime_of(&id, package.manifest)?;
            from_manifest(&id, &root, &version, runtime)
        }
        Target::Command {
            manifest,
            program,
            args,
        } => {
            let path = absolute(manifest)?;
            // The file named on the command line: a link is followed (it is the user's own
            // choice, like a config file), but only a regular file within the manifest cap is
            // read, without blocking.
            let text = sidewire_process::file::read_to_string(
                &path,
                crate::MAX_MANIFEST_BYTES,
                sidewire_process::file::Symlinks::Follow,
            )
            .map_err(Error::File)?;
            let manifest = Manifest::parse(&text).map_err(|error| Error::Manifest {
                path: path.clone(),
                error,
            })?;
            let id = manifest.name.clone();
            let version = manifest.version.clone();
            let runtime = runtime_of(&id, manifest)?;
            let root = path
                .parent()
                .map_or_else(|| PathBuf::from("/"), Path::to_path_buf);
            let conformance = |detail: String| Error::Conformance {
                target: program.clone(),
                detail,
            };
            let resolved = sidewire_process::resolve(program, None, Some(&root))
                .await
                .map_err(|err| conformance(err.to_string()))?;
            let root_text = root
                .to_str()
                .ok_or_else(|| conformance("the manifest's directory is not UTF-8".to_owned()))?
                .to_owned();
            let mut env: Vec<(String, String)> = runtime
                .env
                .iter()
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect();
            if let Some(path) = resolved.path.as_ref().and_then(|p| p.to_str()) {
                env.push(("PATH".to_owned(), path.to_owned()));
            }
            env.push((sidewire_ext_protocol::ENV_PLUGIN_ROOT.to_owned(), root_text));
            env.push((
                sidewire_ext_protocol::ENV_PLUGIN_NAME.to_owned(),
                id.clone(),
            ));
            env.push((
                sidewire_ext_protocol::ENV_PLUGIN_VERSION.to_owned(),
                version,
            ));
            Ok(Launch {
                spec: LaunchSpec {
                    command: resolved.program,
                    args: args.clone(),
                    env,
                    cwd: root,
                },
                plugin_id: id,
                runtime,
            })
        }
    }
}

fn absolute(path: &Path) -> Result<PathBuf, Error> {
    std::path::absolute(path).map_err(|err| Error::io(path, err))
}

fn runtime_of(id: &str, manifest: Manifest) -> Result<RuntimeSpec, Error> {
    manifest.runtime.ok_or_else(|| Error::Conformance {
        target: id.to_owned(),
        detail: "its manifest has no `runtime`: there is no sidecar to check".to_owned(),
    })
}

fn from_manifest(
    id: &str,
    root: &Path,
    version: &str,
    runtime: RuntimeSpec,
) -> Result<Launch, Error> {
    let spec =
        resolve_launch(id, root, version, &runtime).map_err(|refused| Error::Conformance {
            target: id.to_owned(),
            detail: refused.to_string(),
        })?;
    Ok(Launch {
        spec,
        plugin_id: id.to_owned(),
        runtime,
    })
}
