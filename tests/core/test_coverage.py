"""Coverage dashboards built from a testkit report: statuses per opset, md/json/html, a real browser."""

from __future__ import annotations

import json
import os
import shutil

import pytest

from onnxport.tools import coverage, coverage_html


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
    from onnxport.plugin import spec

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
    html = coverage_html.to_html(cov)
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


def merged_reports() -> list[dict]:
    """Two backend runs: ``demo`` whole (a failure, an expected failure, an ai.onnx.ml node case, a custom
    op's declared case) and ``other`` filtered to Relu (its Add is registered but was not run)."""
    demo = report(RESULTS + [
        res("test_abs_xf", ["Abs"], 13, "xfailed"),
        {"backend": "demo", "direction": "import", "case": "test_ai_onnx_ml_binarizer", "kind": "node",
         "ops": ["ai.onnx.ml::Binarizer"], "target": "ai.onnx.ml::Binarizer", "opset": 21,
         "versions": {"ai.onnx.ml::Binarizer": 1}, "outcome": "passed"},
        {"backend": "demo", "direction": "import", "case": "com.example::ScaledTanh[defaults]", "kind": "declared",
         "domain": "com.example", "ops": ["com.example::ScaledTanh"], "target": "com.example::ScaledTanh",
         "opset": 1, "versions": {"com.example::ScaledTanh": 1}, "outcome": "passed"},
    ])
    demo["registry"]["demo"]["import"] += [
        {"domain": "ai.onnx.ml", "op": "Binarizer", "since": 1, "source": "demo.bin"},
        {"domain": "com.example", "op": "ScaledTanh", "since": 1, "source": "plugin.st"}]
    other = report([dict(res("test_relu", ["Relu"], 14, "passed"), backend="other")], imports=("Relu", "Add"),
                   exports=())
    other["registry"] = {"other": other["registry"]["demo"]}
    other["filters"] = {"ops": ["Relu"], "backends": ["other"]}
    other["selected"] = {"other": {"import": ["Relu"], "export": []}}
    return [demo, other]


def test_merged_reports_complete_the_matrix(tmp_path) -> None:
    cov = coverage.build(coverage.merge(merged_reports(), ["demo.json", "other.json"]), [14, 21])
    assert cov.backends == ["demo", "other"]
    at = cov.opsets[21].cells
    assert at[("Relu", "other", "import")].status == "tested-passing"
    assert at[("Add", "other", "import")].status == "not-run"  # registered, the filtered run did not select it
    assert at[("Conv", "other", "import")].status == "missing"
    assert at[("Add", "demo", "import")].status == "failing"
    assert at[("Abs", "demo", "import")].status == "expected-failure"  # Abs-13 (opsets 13..): only xfailed
    assert at[("ai.onnx.ml::Binarizer", "demo", "import")].status == "tested-passing"
    assert at[("ai.onnx.ml::Binarizer", "other", "import")].status == "missing"
    assert at[("com.example::ScaledTanh", "demo", "import")].status == "tested-passing"
    assert "ai.onnx.preview.training::Adam" in cov.opsets[14].versions
    md = coverage.to_markdown(cov, 14)
    assert "| Abs | 13 | xfail 1 | - | - | - |" in md
    assert "| Add | 14 | FAIL 1/2 | - | not run | - |" in md
    assert "| ai.onnx.ml::Binarizer | ai.onnx.ml 1 | pass 1/1 | - | - | - |" in md
    # the CLI: several --report, or a folder of testkit*.json
    from onnxport.tools import cli

    for name, rep in zip(("testkit-demo.json", "testkit-other.json"), merged_reports()):
        (tmp_path / name).write_text(json.dumps(rep))
    out = tmp_path / "page.html"
    assert cli.main(["coverage", "--report", str(tmp_path / "testkit-demo.json"),
                     "--report", str(tmp_path / "testkit-other.json"), "-o", str(out)]) == 0
    assert cli.main(["coverage", "--report", str(tmp_path), "-o", str(tmp_path / "same.html")]) == 0
    assert out.read_text() == (tmp_path / "same.html").read_text().replace("same.html", "page.html")


def test_page_is_compact_at_full_scale() -> None:
    """Three backends x two directions, every op with cases at every version: well under 2 MB."""
    from onnxport.plugin import spec

    results, registry = [], {}
    for b in ("torch", "jax", "tensorflow"):
        registry[b] = {"import": [{"domain": "", "op": op, "since": 1, "source": "x"} for op in spec.all_ops("")],
                       "export": [{"target": f"t.{op}", "emits": [op], "samples": 1, "source": "x"}
                                  for op in spec.all_ops("")]}
        for op in spec.all_ops(""):
            for v in spec.versions(op):
                for k in range(12):
                    results.append({"backend": b, "direction": "import", "case": f"test_{op.lower()}_case_{k}",
                                    "ops": [op], "target": op, "versions": {op: v}, "outcome":
                                    "failed" if k == 0 and v % 2 else "passed"})
            results.append({"backend": b, "direction": "export", "case": f"t.{op}[0]", "target": f"t.{op}",
                            "emits": [op], "emitted": [op], "opset": spec.latest_opset(), "outcome": "passed"})
    cov = coverage.build({"onnx": "t", "registry": registry, "results": results})
    page = coverage_html.to_html(cov)
    rows = len(cov.opsets[max(cov.opsets)].versions)
    assert rows > 200
    assert len(page) < 300_000, len(page)  # ~190 kB; the page of one backend was 1.9 MB before


def _chromium() -> tuple[str, str] | None:
    browser = os.environ.get("ONNXPORT_CHROMIUM") or shutil.which("chromium") or shutil.which("chromium-browser")
    driver = os.environ.get("ONNXPORT_CHROMEDRIVER") or shutil.which("chromedriver")
    return (browser, driver) if browser and driver else None


@pytest.fixture
def browser(tmp_path):
    found = _chromium()
    if found is None:
        pytest.skip("no headless browser: install Debian's chromium and chromium-driver (CI does, in .ci/run)")
    webdriver = pytest.importorskip("selenium.webdriver", reason="selenium is not installed (pip install selenium)")
    options = webdriver.ChromeOptions()
    options.binary_location = found[0]
    for flag in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync",
                 f"--user-data-dir={tmp_path / 'profile'}"):
        options.add_argument(flag)
    driver = webdriver.Chrome(service=webdriver.ChromeService(executable_path=found[1]), options=options)
    try:
        yield driver
    finally:
        driver.quit()


def test_html_dashboard_in_a_real_browser(tmp_path, browser) -> None:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select

    cov = coverage.build(coverage.merge(merged_reports(), ["demo.json", "other.json"]), [14, 21])
    path = tmp_path / "coverage.html"
    path.write_text(coverage_html.to_html(cov))
    browser.get(path.as_uri())

    def table(selector: str) -> list[list]:  # one round trip: [[text, class], ...] per row
        return browser.execute_script(
            "return [...document.querySelectorAll(arguments[0])].map("
            "tr => [...tr.cells].map(td => [td.innerText, td.className]))", selector)

    def rows() -> dict[str, list]:
        return {r[0][0]: [tuple(c) for c in r[1:]] for r in table("#ops tbody tr")}

    def search(text: str) -> None:
        box = browser.find_element(By.ID, "search")
        box.clear()
        if text:
            box.send_keys(text)

    header = [th.text.strip(" \u25b2\u25bc") for th in browser.find_elements(By.CSS_SELECTOR, "#ops thead th")]
    assert header == ["op", "version", "demo import", "demo export", "other import", "other export"]
    n21 = len(cov.opsets[21].versions)
    assert len(rows()) == n21 and browser.find_element(By.ID, "count").text == f"{n21} of {n21} ops"
    totals = {tuple(c[0] for c in r)[:8] for r in table("#totals tbody tr")}
    # opset 21 (the newest) first: passing Relu, Binarizer, ScaledTanh; failing Add; Abs only xfailed
    assert ("demo", "import", "3", "1", "1", "0", "0", str(n21 - 5)) in totals
    assert ("other", "import", "1", "0", "0", "0", "1", str(n21 - 2)) in totals

    # cell states, by text and colour class
    at = rows()
    assert at["Relu"][1:] == [("pass 1/1", "tested-passing"), ("pass 1/1", "tested-passing"),
                              ("pass 1/1", "tested-passing"), ("-", "missing")]
    assert at["Add"][1] == ("FAIL 1/2", "failing") and at["Add"][3] == ("not run", "not-run")
    assert at["ai.onnx.ml::Binarizer"][:2] == [("ai.onnx.ml 1", ""), ("pass 1/1", "tested-passing")]
    assert at["com.example::ScaledTanh"][1] == ("pass 1/1", "tested-passing")
    add = browser.find_element(By.XPATH, "//table[@id='ops']/tbody/tr[td[1]='Add']/td[3]")  # tooltips name cases
    assert add.get_attribute("title").split("\n") == ["test_add", "test_add_ok"]

    # search: case-insensitive, op names and domains
    search("relu")
    names = list(rows())
    assert "Relu" in names and "LeakyRelu" in names and all("relu" in n.lower() for n in names)
    assert browser.find_element(By.ID, "count").text == f"{len(names)} of {n21} ops"
    search("AI.ONNX.ML")
    assert set(rows()) == {op for op in cov.opsets[21].versions if op.startswith("ai.onnx.ml::")}
    search("no such op")
    assert rows() == {} and browser.find_element(By.ID, "count").text == f"0 of {n21} ops"
    search("")

    # the status filter and an older opset: Abs-13 had only an expected failure
    Select(browser.find_element(By.ID, "opset")).select_by_visible_text("14")
    assert len(rows()) == len(cov.opsets[14].versions)
    Select(browser.find_element(By.ID, "status")).select_by_visible_text("expected-failure")
    assert rows() == {"Abs": [("13", ""), ("xfail 1", "expected-failure"), ("-", "missing"), ("-", "missing"),
                              ("-", "missing")]}
    Select(browser.find_element(By.ID, "status")).select_by_visible_text("not-run")
    assert set(rows()) == {"Add"}
    Select(browser.find_element(By.ID, "status")).select_by_visible_text("any")

    # sorting: op descending, then by the "demo import" status
    browser.find_elements(By.CSS_SELECTOR, "#ops thead th")[0].click()
    names = list(rows())
    assert names == sorted(names, key=str.lower, reverse=True)
    browser.find_elements(By.CSS_SELECTOR, "#ops thead th")[2].click()
    statuses = [v[1][1] for v in rows().values()]
    order = [coverage.STATUSES.index(s) for s in statuses]
    assert order == sorted(order) and statuses[0] == "tested-passing"


def test_format2_filtered_report_shows_not_run() -> None:
    """A report written before the testkit recorded its selection: the filter terms decide."""
    old = report(RESULTS)
    old["filters"] = {"ops": ["Relu", "t.relu"], "backends": ["demo"]}
    cov = coverage.build(old, [21])
    at = cov.opsets[21].cells
    assert at[("Relu", "demo", "import")].status == "tested-passing"
    assert at[("Add", "demo", "import")].status == "failing"  # it has results: they count
    assert at[("Abs", "demo", "import")].status == "not-run"  # registered, not selected, no results
    assert at[("Relu", "demo", "export")].status == "tested-passing"
