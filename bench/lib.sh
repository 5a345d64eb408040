# Sourced by the bench scripts: how they speak, and how they install the Debian packages a run
# needs (as root, or through sudo), so each script only lists what it lacks.

die() { echo "bench: error: $*" >&2; exit 1; }
say() { echo "==> $*" >&2; }

# Installs the Debian packages given; nothing when none are.
apt_install() {
    (($#)) || return 0
    command -v apt-get >/dev/null || die "missing $* and no apt-get to install them"
    local sudo=()
    if ((EUID != 0)); then
        command -v sudo >/dev/null || die "missing $*; run as root or install them yourself"
        sudo=(sudo)
    fi
    say "installing $*"
    "${sudo[@]}" apt-get update -qq || die "apt-get update failed"
    DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -qq "$@" >/dev/null \
        || die "apt-get install $* failed"
}
