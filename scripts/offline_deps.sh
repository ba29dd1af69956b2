#!/usr/bin/env bash
# For a machine without package access (a GPU machine that can reach no registry): what the build
# needs beyond libtorch and a compiler, as Debian 12 packages extracted into one folder to copy
# there, and an env.sh to source there before building.
#   scripts/offline_deps.sh FOLDER          here, with apt (downloads, extracts, writes FOLDER/env.sh)
#   source FOLDER/env.sh                    there, from the folder's parent (PATH, CMAKE_PREFIX_PATH, ...)
# GoogleTest, Google Benchmark, CLI11 and nlohmann-json are what the build links or includes;
# libcurl is the llm clients' library (a linker flag lets the command link without curl's own
# dependencies; those the machine lacks at run time come from curl_libraries); bubblewrap is the
# kernels' sandbox (with libcap and libselinux beside it, used only where the machine lacks them).
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
rm -f "$downloads"/*.deb
# libcurl's own libraries, of which env.sh puts only those the machine lacks on the library path
# (an H200 image had no libssh2 or libldap, so the command did not start there).
mkdir -p "$folder/curl_libraries"
(cd "$downloads" && apt-get download libssh2-1 librtmp1 libnghttp2-14 libpsl5 libbrotli1 libldap-2.5-0 libsasl2-2 \
                                    libgssapi-krb5-2 libkrb5-3 libk5crypto3 libkrb5support0 libkeyutils1 libidn2-0 \
                                    libunistring2 libgnutls30 libhogweed6 libnettle8 libp11-kit0 libtasn1-6 libffi8 \
                                    libgmp10 >/dev/null)
for deb in "$downloads"/*.deb; do dpkg -x "$deb" "$folder/curl_libraries"; done
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
# What libcurl needs and the machine lacks, linked from curl_libraries (nothing the machine has is shadowed).
mkdir -p "\$d/missing"
export LD_LIBRARY_PATH="\$LD_LIBRARY_PATH:\$d/missing"
for round in 1 2 3 4; do  # a library found may itself need one that is missing
  for lib in \$(ldd "\$d/root/usr/lib/x86_64-linux-gnu/libcurl.so.4" | awk '/not found/ {print \$1}'); do
    found=\$(find "\$d/curl_libraries" -name "\$lib" | head -1)
    [ -n "\$found" ] && ln -sf "\$(realpath "\$found")" "\$d/missing/\$lib"
  done
done
export BACKENDBENCH_NO_INSTALL=1
ENV
du -sh "$folder"
echo "offline_deps: copy $folder to the machine, then: source $name/env.sh (from its parent folder)"
