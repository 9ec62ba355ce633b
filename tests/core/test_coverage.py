"""Coverage dashboards built from a testkit report: statuses per opset, md/json/html, a real browser."""

from __future__ import annotations

import json
import os
import shutil

import pytest

from onnxport import coverage


def report(results, imports=("Relu", "Add", "Abs"), exports=(("t.relu", ["Relu"]),)) -> dict:
    return {
        "format": 2,
        "onnx": "test",
        "registry": {
            "demo": {
                "import": [{"domain": "", "op": op, "since": 1, "source": f"demo.{op}"} for op in imports],
                "export": [{"target": t, "emits": e, "samples": 1, "source": t} for t, e in exports],
            }
        },
        "results": results,
    }


def res(case, ops, opset, outcome, direction="import", **kw):
    from onnxport import spec

    versions = {op: spec.get_spec(op, opset).since_version for op in ops}
    return {"backend": "demo", "direction": direction, "case": case, "ops": ops, "target": ops[0],
            "opset": opset, "versions": versions, "outcome": outcome, "kind": "node", **kw}


RESULTS = [
    res("test_relu", ["Relu"], 14, "passed"),
    res("test_relu_opset7", ["Relu"], 7, "passed"),
    res("test_add", ["Add"], 14, "failed"),
    res("test_add_ok", ["Add"], 14, "passed"),
    res("test_abs", ["Abs"], 13, "skipped"),
    {"backend": "demo", "direction": "export", "case": "t.relu[0]", "target": "t.relu", "emits": ["Relu"],
     "emitted": ["Relu"], "opset": 21, "outcome": "passed", "kind": "export"},
]


def cell(cov, opset, op, direction="import"):
    return cov.opsets[opset].cells[(op, "demo", direction)]


def test_statuses_follow_the_version_each_opset_maps_to() -> None:
    cov = coverage.build(report(RESULTS), [7, 13, 14, 21])
    # Relu-14 passed at opset 14 and stays covered through 21; Relu-6 (opsets 7..12) has its own case
    assert cell(cov, 14, "Relu").status == "tested-passing"
    assert cell(cov, 21, "Relu").status == "tested-passing"
    assert cell(cov, 7, "Relu").status == "tested-passing"
    assert cell(cov, 13, "Relu").status == "registered-untested"  # Relu-13: no case ran it
    assert cell(cov, 14, "Add").status == "failing" and cell(cov, 14, "Add").passed == 1
    assert cell(cov, 14, "Abs").status == "registered-untested"  # only skipped
    assert cell(cov, 14, "Conv").status == "missing"
    assert cell(cov, 21, "Relu", "export").status == "tested-passing"
    assert cell(cov, 14, "Relu", "export").status == "tested-passing"  # Relu-14 is Relu at 21 too
    assert cell(cov, 13, "Relu", "export").status == "registered-untested"
    assert cell(cov, 21, "Add", "export").status == "missing"
    # an op appears only from the opset that defines it
    assert "Gelu" not in cov.opsets[14].versions and "Gelu" in cov.opsets[21].versions
    totals = cov.opsets[14].totals(["demo"])["demo"]["import"]
    assert (totals["tested-passing"], totals["failing"], totals["registered-untested"]) == (1, 1, 1)
    assert sum(totals.values()) == len(cov.opsets[14].versions)


def test_formats(tmp_path) -> None:
    path = tmp_path / "r.json"
    path.write_text(json.dumps(report(RESULTS)))
    cov = coverage.from_report(path)
    assert min(cov.opsets) == 7 and max(cov.opsets) == coverage._spec.latest_opset()
    md = coverage.to_markdown(cov, 14)
    assert "| Relu | 14 | pass 1/1 | pass 1/1 |" in md
    assert "| Add | 14 | FAIL 1/2 | - |" in md
    data = json.loads(coverage.to_json(cov))
    assert data["opsets"]["14"]["ops"]["Relu"]["demo"]["import"]["status"] == "tested-passing"
    html = coverage.to_html(cov)
    assert html.count("<script") == 2 and "http" not in html.split("<body>")[1]  # static, self-contained


def test_bad_reports_raise_clear_errors(tmp_path) -> None:
    with pytest.raises(coverage.ReportError, match="no testkit report"):
        coverage.load_report(tmp_path / "missing.json")
    (tmp_path / "bad.json").write_text("{")
    with pytest.raises(coverage.ReportError, match="not a JSON testkit report"):
        coverage.load_report(tmp_path / "bad.json")
    (tmp_path / "old.json").write_text(json.dumps({"results": []}))
    with pytest.raises(coverage.ReportError, match="old-format"):
        coverage.load_report(tmp_path / "old.json")


def _chromium() -> tuple[str, str] | None:
    browser = os.environ.get("ONNXPORT_CHROMIUM") or shutil.which("chromium") or shutil.which("chromium-browser")
    driver = os.environ.get("ONNXPORT_CHROMEDRIVER") or shutil.which("chromedriver")
    return (browser, driver) if browser and driver else None


def test_html_dashboard_sorts_and_shows_totals_in_a_real_browser(tmp_path) -> None:
    found = _chromium()
    if found is None:
        pytest.skip("no headless browser: install Debian's chromium and chromium-driver (CI does, in .ci/run)")
    webdriver = pytest.importorskip("selenium.webdriver", reason="selenium is not installed (pip install selenium)")
    from selenium.webdriver.common.by import By

    path = tmp_path / "coverage.html"
    path.write_text(coverage.to_html(coverage.build(report(RESULTS), [14, 21])))
    options = webdriver.ChromeOptions()
    options.binary_location = found[0]
    for flag in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync",
                 f"--user-data-dir={tmp_path / 'profile'}"):
        options.add_argument(flag)
    driver = webdriver.Chrome(service=webdriver.ChromeService(executable_path=found[1]), options=options)
    try:
        driver.get(path.as_uri())

        def column(i: int) -> list[str]:
            return [r.find_elements(By.TAG_NAME, "td")[i].text for r in driver.find_elements(By.CSS_SELECTOR, "#ops tbody tr")]

        totals = {tuple(td.text for td in r.find_elements(By.TAG_NAME, "td"))[:6]
                  for r in driver.find_elements(By.CSS_SELECTOR, "#totals tbody tr")}
        n21 = len(coverage._spec.all_ops("", 21))
        assert ("demo", "import", "1", "1", "1", str(n21 - 3)) in totals  # opset 21 shown first (newest)
        ops = column(0)
        assert ops == sorted(ops) and len(ops) == n21
        header = driver.find_elements(By.CSS_SELECTOR, "#ops thead th")
        header[0].click()  # op, descending
        assert column(0) == sorted(ops, reverse=True)
        driver.find_elements(By.CSS_SELECTOR, "#ops thead th")[2].click()  # "demo import": status rank
        statuses = [s.split()[0] for s in column(2)]
        assert statuses[:3] == ["tested-passing", "failing", "registered-untested"]
        assert set(statuses[3:]) == {"missing"}
        # another opset from the selector
        from selenium.webdriver.support.ui import Select

        Select(driver.find_element(By.ID, "opset")).select_by_value("14")
        assert len(column(0)) == len(coverage._spec.all_ops("", 14))
    finally:
        driver.quit()
