#!/usr/bin/env bash
# The Python package as a user installs it: a virtual environment that sees the torch already
# installed (--system-site-packages), the package's build and test dependencies from PyPI,
# `pip install --no-build-isolation .`, then its tests (python/tests) from outside the checkout.
set -euo pipefail
cd "$(dirname "$0")/.."
python=${PYTHON:-python3}
venv=build-python/venv
[[ -x $venv/bin/python ]] || "$python" -m venv --system-site-packages "$venv"
"$venv/bin/python" -m pip install --quiet scikit-build-core pytest timm transformers torchvision
"$venv/bin/python" -m pip install --quiet --no-build-isolation .
(cd "$venv" && bin/python -m pytest -q -p no:cacheprovider "$OLDPWD/python/tests")
