"""Where the full studies find Fashion-MNIST: the environment's folder, the Debian
package's folder, an install when root and apt allow it, else one line to run."""

import pytest

from studies import data


def fill(folder, gz=True):
    folder.mkdir(parents=True, exist_ok=True)
    for name in data.FILES:
        (folder / (f"{name}.gz" if gz else name)).write_bytes(b"")
    return folder


def never():
    raise AssertionError("no install expected")


def test_the_environments_folder_comes_first(tmp_path):
    given, package = fill(tmp_path / "given", gz=False), fill(tmp_path / "package")
    found = data.fashion_mnist_folder({data.FASHION_ENV: str(given)}, package,
                                      installable=lambda: True, install=never)
    assert found == given


def test_a_variable_naming_a_folder_without_the_files_is_one_line(tmp_path):
    with pytest.raises(data.DataMissing, match="lacks Fashion-MNIST's IDX files") as err:
        data.fashion_mnist_folder({data.FASHION_ENV: str(tmp_path)}, fill(tmp_path / "p"),
                                  installable=lambda: True, install=never)
    assert "\n" not in str(err.value)


def test_the_package_folder_then_an_install(tmp_path):
    package = tmp_path / "package"
    assert data.fashion_mnist_folder({}, fill(package), installable=never) == package
    other = tmp_path / "other"
    found = data.fashion_mnist_folder({}, other, installable=lambda: True,
                                      install=lambda: fill(other))
    assert found == other


def test_without_root_or_apt_it_says_what_to_run(tmp_path):
    with pytest.raises(data.DataMissing) as err:
        data.fashion_mnist_folder({}, tmp_path / "absent", installable=lambda: False,
                                  install=never)
    message = str(err.value)
    assert "apt-get install -y dataset-fashion-mnist" in message and data.FASHION_ENV in message
    assert "\n" not in message


def test_a_failed_install_still_says_what_to_run(tmp_path):
    with pytest.raises(data.DataMissing, match="apt-get install"):
        data.fashion_mnist_folder({}, tmp_path / "absent", installable=lambda: True,
                                  install=lambda: None)


def test_python_m_studies_stops_with_one_line_when_the_data_is_missing(tmp_path, monkeypatch,
                                                                      capsys):
    from studies.run_all import main

    monkeypatch.setenv(data.FASHION_ENV, str(tmp_path / "absent"))
    assert main(["--out", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and data.FASHION_ENV in err
    assert not (tmp_path / "out").exists()
