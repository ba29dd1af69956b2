#!/usr/bin/env bash
# For a machine without package access (a GPU machine that can reach no registry): what the build
# needs beyond libtorch and a compiler, as Debian 12 packages extracted into one folder to copy
# there, and an env.sh to source there before building.
#   scripts/offline_deps.sh FOLDER          here, with apt (downloads, extracts, writes FOLDER/env.sh)
#   source FOLDER/env.sh                    there, from the folder's parent (PATH, CMAKE_PREFIX_PATH, ...)
# GoogleTest, Google Benchmark, CLI11 and nlohmann-json are what the build links or includes;
# libcurl only lets the configure step find it (the llm clients' library; a linker flag lets the
# command link without curl's own dependencies); bubblewrap is the kernels' sandbox (with libcap
# and libselinux beside it, used only where the machine lacks them).
set -euo pipefail
folder=$(realpath -m "${1:?usage: scripts/offline_deps.sh FOLDER}")
mkdir -p "$folder/root" "$folder/extra"
downloads=$(mktemp -d)
trap 'rm -rf "$downloads"' EXIT
(cd "$downloads" && apt-get download libgtest-dev libbenchmark-dev libbenchmark1debian libcli11-dev nlohmann-json3-dev \
                                    bubblewrap libcurl4-openssl-dev libcurl4 >/dev/null)
for deb in "$downloads"/*.deb; do dpkg -x "$deb" "$folder/root"; done
rm -f "$downloads"/*.deb
(cd "$downloads" && apt-get download libcap2 libselinux1 libpcre2-8-0 >/dev/null)
for deb in "$downloads"/*.deb; do dpkg -x "$deb" "$folder/extra"; done
name=$(basename "$folder")
cat >"$folder/env.sh" <<ENV
# Sourced from the folder above $name (scripts/offline_deps.sh wrote it).
d=\$(realpath $name)
mkdir -p "\$d/wrap"
if ldd "\$d/root/usr/bin/bwrap" | grep -q "not found"; then
  printf '#!/bin/sh\nLD_LIBRARY_PATH=%s exec %s "\$@"\n' "\$d/extra/lib/x86_64-linux-gnu:\$d/extra/usr/lib/x86_64-linux-gnu" \\
         "\$d/root/usr/bin/bwrap" >"\$d/wrap/bwrap"
  chmod +x "\$d/wrap/bwrap"
else
  ln -sf "\$d/root/usr/bin/bwrap" "\$d/wrap/bwrap"
fi
export PATH="\$d/wrap:\$PATH"
export EXTRA_PREFIX="\$d/root/usr"
export CMAKE_PREFIX_PATH="\$(python3 -c 'import torch; print(torch.utils.cmake_prefix_path)');\$d/root/usr"
export CMAKE_INCLUDE_PATH="\$d/root/usr/include"
# The system compiler, whose libstdc++ the programs load at run time (an image's CXX may name a
# newer g++ whose programs then abort in the older library: seen on the H100 machine).
export CC=/usr/bin/gcc CXX=/usr/bin/g++ CUDAHOSTCXX=/usr/bin/g++
export LDFLAGS="-Wl,--allow-shlib-undefined"
export LD_LIBRARY_PATH="\${LD_LIBRARY_PATH:+\$LD_LIBRARY_PATH:}\$d/root/usr/lib/x86_64-linux-gnu"
export BACKENDBENCH_NO_INSTALL=1
ENV
du -sh "$folder"
echo "offline_deps: copy $folder to the machine, then: source $name/env.sh (from its parent folder)"
