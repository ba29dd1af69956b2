"""The Python side of the Python bridge: op libraries' listings and tables, and loading .py kernels
(python/backendbench/op_libraries.py, kernel_loading.py)."""
import dataclasses
import textwrap

import pytest

from backendbench import kernel_loading, op_libraries


def write_package(root, name, body):
    package = root / name
    package.mkdir()
    (package / "__init__.py").write_text(textwrap.dedent(body))
    return package


@pytest.fixture
def fake_library(tmp_path, monkeypatch):
    """A library registered like flag_gems, under a module of our own."""
    monkeypatch.syspath_prepend(str(tmp_path))

    def register(module, body):
        write_package(tmp_path, module, body)
        entry = dataclasses.replace(op_libraries.LIBRARIES["flag_gems"], name=module, module=module)
        monkeypatch.setitem(op_libraries.LIBRARIES, module, entry)
        op_libraries._tables.pop(module, None)
        return module

    return register


def test_torch_decompositions_list_operators_and_run_anywhere():
    text = op_libraries.listing("torch_decomp")
    lines = text.splitlines()
    assert lines[1] == "# device: any"
    assert not any(line.startswith("# unavailable") for line in lines)
    assert "relu.default" in lines and "add.Tensor" in lines
    assert callable(op_libraries.implementation("torch_decomp", "relu.default"))


def test_a_table_row_whose_condition_is_false_is_not_registered(fake_library):
    name = fake_library("gems_here", """
        def relu(x): return x.clamp(min=0)
        def add(a, b, alpha=1): return a - (-alpha) * b
        _FULL_CONFIG = (("relu", relu), ("add.Tensor", add, lambda: False))
    """)
    assert sorted(op_libraries.implementations(name)) == ["relu.default"]
    with pytest.raises(op_libraries.Unavailable, match="registers no add.Tensor on this machine"):
        op_libraries.implementation(name, "add.Tensor")
    assert op_libraries.listing(name).splitlines()[2:] == ["relu.default"]


def test_a_library_that_cannot_import_here_is_listed_from_its_source(fake_library):
    name = fake_library("gems_without_gpu", """
        raise RuntimeError("No device were detected on your machine !\\n Please check")
        _FULL_CONFIG = (("add.Tensor", add), ("abs", abs_), ("zeros_like", zeros_like))
    """)
    lines = op_libraries.listing(name).splitlines()
    assert lines[2] == ("# unavailable: importing gems_without_gpu raised RuntimeError: No device were detected on "
                        "your machine ! Please check")
    assert lines[3:] == ["abs.default", "add.Tensor", "zeros_like.default"]
    with pytest.raises(kernel_loading.KernelUnavailable, match="No device were detected"):
        kernel_loading.op_library_function(name, "abs.default")


def test_a_library_that_is_not_installed_says_how_to_get_it(monkeypatch):
    entry = dataclasses.replace(op_libraries.LIBRARIES["flag_gems"], name="absent", module="no_such_module_here")
    monkeypatch.setitem(op_libraries.LIBRARIES, "absent", entry)
    lines = op_libraries.listing("absent").splitlines()
    assert lines[2].startswith("# unavailable: no_such_module_here is not installed (pip install --no-deps flag-gems")
    assert lines[3:] == []


def test_the_listing_is_written_only_when_it_changed(tmp_path):
    out = tmp_path / "listing.txt"
    assert op_libraries.main(["--list", "torch_decomp", "--output", str(out)]) == 0
    out.write_text(out.read_text())  # same text; record its time
    before = out.stat().st_mtime_ns
    assert op_libraries.main(["--list", "torch_decomp", "--output", str(out)]) == 0
    assert out.stat().st_mtime_ns == before
    assert op_libraries.main(["--list", "nope"]) == 2


def kernel_file(tmp_path, text):
    path = tmp_path / "relu" / "relu_implementation_1.py"
    path.parent.mkdir(exist_ok=True)
    path.write_text(textwrap.dedent(text))
    return str(path)


def test_a_kernel_file_is_loaded_as_the_original_loads_it(tmp_path):
    path = kernel_file(tmp_path, """
        import torch
        def relu_kernel_impl(*args, **kwargs):
            return torch.clamp(args[0], min=0)
    """)
    function = kernel_loading.load_kernel_file(path, "relu_kernel_impl")
    import torch
    assert function(torch.tensor([-1.0, 2.0])).tolist() == [0.0, 2.0]


def test_a_syntax_error_names_the_file_and_line(tmp_path):
    path = kernel_file(tmp_path, """
        def relu_kernel_impl(x):
            return (x
    """)
    with pytest.raises(kernel_loading.KernelLoadError) as error:
        kernel_loading.load_kernel_file(path, "relu_kernel_impl")
    assert str(error.value).startswith(f"{path}:3:")
    assert "error: SyntaxError" in str(error.value)


def test_an_import_that_raises_names_its_line(tmp_path):
    path = kernel_file(tmp_path, """
        import torch

        raise ImportError("triton is missing")
    """)
    with pytest.raises(kernel_loading.KernelLoadError) as error:
        kernel_loading.load_kernel_file(path, "relu_kernel_impl")
    assert str(error.value).startswith(f"{path}:4:1: error: importing it raised ImportError: triton is missing")


def test_a_missing_function_names_the_one_expected(tmp_path):
    path = kernel_file(tmp_path, "def relu(x):\n    return x\n")
    with pytest.raises(kernel_loading.KernelLoadError,
                       match=r"relu_implementation_1\.py:1:1: error: it defines no function relu_kernel_impl; "
                             r"expected def relu_kernel_impl\(\*args, \*\*kwargs\)"):
        kernel_loading.load_kernel_file(path, "relu_kernel_impl")
