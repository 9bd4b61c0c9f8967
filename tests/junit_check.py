#!/usr/bin/env python3
"""Checks a locksim JUnit XML file as a CI dashboard reads it (Jenkins'
junit plugin, GitLab's test reports): well-formed; a <testsuites> root of
<testsuite> elements of <testcase> elements; every testcase with a
classname, a name and at most one of <failure>, <error>, <skipped>; every
(classname, name) pair unique; each suite's and the root's tests, failures,
errors and skipped equal to what their cases hold. Prints one line and
exits 0, or says what is wrong and exits 1. Usage: junit_check.py FILE.xml"""
import sys
import xml.etree.ElementTree as ET


def fail(msg):
    print("junit: " + msg)
    sys.exit(1)


def counts(cases):
    c = {"tests": len(cases), "failures": 0, "errors": 0, "skipped": 0}
    for tc in cases:
        kinds = [k for k in ("failure", "error", "skipped") if tc.find(k) is not None]
        if len(kinds) > 1:
            fail("testcase %r has %s" % (tc.get("name"), " and ".join(kinds)))
        for k in kinds:
            c[{"failure": "failures", "error": "errors", "skipped": "skipped"}[k]] += 1
    return c


def agree(el, cases, what):
    for k, v in counts(cases).items():
        if el.get(k) != str(v):
            fail("%s says %s=%r, its cases hold %d" % (what, k, el.get(k), v))


try:
    root = ET.parse(sys.argv[1]).getroot()
except ET.ParseError as e:
    fail("not well-formed: %s" % e)
if root.tag != "testsuites":
    fail("the root is <%s>, not <testsuites>" % root.tag)
seen, every = set(), []
suites = list(root)
for s in suites:
    if s.tag != "testsuite" or not s.get("name"):
        fail("<%s> under <testsuites> is not a named <testsuite>" % s.tag)
    cases = list(s)
    for tc in cases:
        if tc.tag != "testcase" or not tc.get("classname") or not tc.get("name"):
            fail("<%s> in suite %r is not a testcase with a classname and a name" % (tc.tag, s.get("name")))
        if tc.get("classname") != s.get("name"):
            fail("testcase class %r in suite %r" % (tc.get("classname"), s.get("name")))
        key = (tc.get("classname"), tc.get("name"))
        if key in seen:
            fail("testcase %s / %s appears twice" % key)
        seen.add(key)
    agree(s, cases, "suite %r" % s.get("name"))
    every += cases
agree(root, every, "<testsuites>")
print("junit: %d testcases in %d testsuites, names unique, counts agree" % (len(every), len(suites)))
