# SPDX-License-Identifier: MIT
"""The README's usage example, run in CI so the README cannot rot."""


def test_readme_example(capsys):
    # README-EXAMPLE-BEGIN
    import hipacm

    SOURCE = """
    template <typename T> __global__ void scale(T* x, T a, int n) {
      int i = blockIdx.x * blockDim.x + threadIdx.x;
      if (i < n) x[i] *= a;
    }"""

    ready = []
    with hipacm.AsyncCompileMode(arch="gfx90a") as mode:  # compiles in the background
        future = mode.submit(None, SOURCE, name_expressions=["scale<float>"],
                             finalize=ready.append)  # runs once, on the collecting thread
        ...  # the JIT keeps warming up meanwhile
    kernel = future.result()  # exiting the mode collected it; a failure would have raised
    assert kernel.code[:4] == b"\x7fELF"
    print(kernel.lowered_names["scale<float>"])  # _Z5scaleIfEvPT_S0_i
    # README-EXAMPLE-END

    assert ready == [kernel]
    assert capsys.readouterr().out == "_Z5scaleIfEvPT_S0_i\n"


def test_package_readme_shows_exactly_this_example():
    import textwrap
    from pathlib import Path

    here = Path(__file__).read_text()
    begin = here.index("# README-EXAMPLE-BEGIN\n") + len("# README-EXAMPLE-BEGIN\n")
    end = here.rindex("\n", 0, here.index("# README-EXAMPLE-END"))
    example = textwrap.dedent(here[begin:end]).strip("\n")
    package_readme = Path(__file__).resolve().parents[1] / "README.md"
    project_readme = Path(__file__).resolve().parents[3] / "README.md"
    for readme in (package_readme, project_readme):
        assert "```python\n" + example + "\n```" in readme.read_text(), readme
