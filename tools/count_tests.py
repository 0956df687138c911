"""Counts test cases after `bazel test` and prints 'N passed, N failed, N skipped'.

Reads each test target's test.xml (one <testcase> per gtest case; one per
script test). A script test that printed a line starting with 'SKIPPED:' is
counted as skipped, as are gtest cases marked skipped. Targets that failed to
build, timed out or produced no XML count as one failure each.
Exit status: 1 if anything failed or nothing ran.
"""
import os
import re
import sys
import xml.etree.ElementTree as ET

log_path, testlogs = sys.argv[1], sys.argv[2]
summary = re.compile(r"^(//\S+)\s+(?:\(cached\)\s+)?(PASSED|FAILED|TIMEOUT|NO STATUS|FAILED TO BUILD|FLAKY|SKIPPED|INCOMPLETE)\b")
statuses = {}
with open(log_path, errors="replace") as f:
    for line in f:
        m = summary.match(line.strip())
        if m:
            statuses[m.group(1)] = m.group(2)
# A build failure before any test ran leaves no summary lines.
build_failed = any("FAILED: Build did NOT complete" in l for l in open(log_path, errors="replace"))

passed = failed = skipped = 0
failures = []
for target, status in sorted(statuses.items()):
    rel = target[2:].replace(":", "/")
    xml_path = os.path.join(testlogs, rel, "test.xml")
    log_file = os.path.join(testlogs, rel, "test.log")
    if status not in ("PASSED", "FLAKY", "FAILED") or not os.path.exists(xml_path):
        failed += 1
        failures.append(f"{target} ({status})")
        continue
    script_skip = False
    if os.path.exists(log_file):
        with open(log_file, errors="replace") as f:
            script_skip = any(l.startswith("SKIPPED:") for l in f)
    try:
        cases = ET.parse(xml_path).getroot().iter("testcase")
    except ET.ParseError:
        failed += 1
        failures.append(f"{target} (unreadable test.xml)")
        continue
    n = 0
    for case in cases:
        n += 1
        if case.find("failure") is not None or case.find("error") is not None:
            failed += 1
            failures.append(f"{target} {case.get('name')}")
        elif case.get("result") == "skipped" or case.find("skipped") is not None:
            skipped += 1
        elif script_skip:
            skipped += 1
        else:
            passed += 1
    if n == 0:
        # Bazel's own XML for script tests may lack cases: count the target.
        if status == "FAILED":
            failed += 1
            failures.append(target)
        elif script_skip:
            skipped += 1
        else:
            passed += 1
    elif status == "FAILED" and not any(f.startswith(target) for f in failures):
        failed += 1
        failures.append(f"{target} (exit status)")

if build_failed and not statuses:
    failed += 1
    failures.append("build failed before any test ran")
for f in failures:
    print(f"FAILED: {f}")
print(f"{passed} passed, {failed} failed, {skipped} skipped")
sys.exit(1 if failed or passed + skipped == 0 else 0)
