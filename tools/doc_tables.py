#!/usr/bin/env python3
"""doc_tables.py — the generated tables of docs/analyses-results.md and the check that the page
quotes them, not numbers copied by hand.

  doc_tables.py check [DOC]   every generated block equals its file in docs/results/; every number
                              in a section's prose is in one of its blocks or quoted files (or is
                              declared a constant of the section); a section with numbers and
                              neither fails. Exit 1 on any mismatch.
  doc_tables.py write [DOC]   replaces every generated block with its file's text (reproduce.sh
                              calls it after writing the files).

A generated block in the page:

    <!-- generated: NAME -->
    ```text
    ...docs/results/NAME.txt, as tools/reproduce.sh wrote it...
    ```
    <!-- /generated: NAME -->

A section's constants (thresholds and settings quoted in its prose, not measured):
    <!-- constants: 0.2 0.001 -->
A section that quotes tables shown elsewhere (a summary) names their files; its numbers must be in them:
    <!-- quotes: sweep babi -->
Standard library only (CI runs the check without h5py).
"""
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RESULTS = os.path.join(ROOT, "docs", "results")
BLOCK = re.compile(r"<!-- generated: ([\w.-]+) -->\n```text\n(.*?)```\n<!-- /generated: \1 -->", re.S)
NUMBER = re.compile(r"(?<![\w.])[+-]?(\d+\.\d+)(?![\d])")


def result_text(name):
    path = os.path.join(RESULTS, name + ".txt")
    if not os.path.exists(path):
        raise SystemExit(f"{path}: missing (run: bash tools/reproduce.sh {name})")
    with open(path) as f:
        return f.read()


def sections(text):
    """[(title, body)] split at '## ' headings (the text before the first is section '')."""
    out, title, body = [], "", []
    for line in text.splitlines(keepends=True):
        if line.startswith("## "):
            out.append((title, "".join(body)))
            title, body = line[3:].strip(), []
        else:
            body.append(line)
    out.append((title, "".join(body)))
    return out


def prose(body):
    """The section's lines outside code fences and HTML comments."""
    lines, fenced = [], False
    for line in body.splitlines():
        if line.startswith("```"):
            fenced = not fenced
            continue
        if not fenced:
            lines.append(re.sub(r"<!--.*?-->", "", line))
    return "\n".join(lines)


def check(doc):
    with open(doc) as f:
        text = f.read()
    problems, legacy = [], []
    for title, body in sections(text):
        blocks = BLOCK.findall(body)
        opened = len(re.findall(r"^<!-- generated: [\w.-]+ -->$", body, re.M))
        if opened != len(blocks):
            problems.append(f"section '{title}': a generated block is not closed as '<!-- /generated: NAME -->' after a ```text fence")
        quoted = [n for q in re.findall(r"<!-- quotes: (.*?) -->", body) for n in q.split()]
        if not blocks and not quoted:
            if title and NUMBER.search(prose(body)):
                legacy.append(title)
            continue
        tables = "".join(result_text(n) for n in quoted)
        for name, shown in blocks:
            want = result_text(name)
            if shown != want:
                problems.append(f"section '{title}': block '{name}' differs from docs/results/{name}.txt (run: python3 tools/doc_tables.py write)")
            if not want.startswith(f"# tools/reproduce.sh {name}"):
                problems.append(f"docs/results/{name}.txt: does not start with the '# tools/reproduce.sh {name}' line that says how it was made")
            tables += want
        constants = set()
        for c in re.findall(r"<!-- constants: (.*?) -->", body):
            constants.update(c.split())
        table_numbers = set(m.group(1) for m in NUMBER.finditer(tables))
        for m in NUMBER.finditer(prose(body)):
            n = m.group(1)
            if n not in table_numbers and n not in constants and m.group(0) not in constants:
                problems.append(f"section '{title}': the number {m.group(0)} in its text is in none of its generated tables")
    for p in problems:
        print("doc_tables: " + p)
    for t in legacy:  # a measured number no recipe makes: typed by hand, or from a run nobody can redo
        problems.append(f"section '{t}': numbers in its text, but no generated block or quotes line: "
                        "make it a recipe of tools/reproduce.sh, or declare its settings as constants")
    print(f"doc_tables: {'FAILED' if problems else 'ok'} ({doc})")
    return 1 if problems else 0


def write(doc):
    with open(doc) as f:
        text = f.read()
    new = BLOCK.sub(lambda m: f"<!-- generated: {m.group(1)} -->\n```text\n{result_text(m.group(1))}```\n<!-- /generated: {m.group(1)} -->", text)
    if new != text:
        with open(doc, "w") as f:
            f.write(new)
    print(f"doc_tables: {doc} {'updated' if new != text else 'unchanged'}")
    return 0


def self_test():
    """The check's oracle: a copied number and a stale block are caught; the page as written passes."""
    import tempfile
    global RESULTS
    with tempfile.TemporaryDirectory() as d:
        RESULTS = d
        with open(os.path.join(d, "t.txt"), "w") as f:
            f.write("# tools/reproduce.sh t\nexcess +0.378 and 2.330\n")
        good = "## S\nIt reads +0.378 (2.330), over 0.5 of a bin.\n<!-- constants: 0.5 -->\n<!-- generated: t -->\n```text\n# tools/reproduce.sh t\nexcess +0.378 and 2.330\n```\n<!-- /generated: t -->\n"
        copied = good.replace("(2.330)", "(2.331)")
        stale = good.replace("and 2.330\n```", "and 2.339\n```")
        summary = good + "## Summary\n<!-- quotes: t -->\nThe excess was +0.378.\n"
        summary_copied = summary.replace("was +0.378", "was +0.379")
        by_hand = good + "## Older\nIt read 0.42 once.\n"
        results = {}
        for name, page in (("good", good), ("copied", copied), ("stale", stale), ("summary", summary),
                           ("summary_copied", summary_copied), ("by_hand", by_hand)):
            path = os.path.join(d, name + ".md")
            with open(path, "w") as f:
                f.write(page)
            results[name] = check(path)
        ok = results == {"good": 0, "copied": 1, "stale": 1, "summary": 0, "summary_copied": 1, "by_hand": 1}
        print(f"doc_tables self-test: {'ok' if ok else 'FAILED'} {results}")
        return 0 if ok else 1


if __name__ == "__main__":
    cmd = sys.argv[1] if len(sys.argv) > 1 else "check"
    doc = sys.argv[2] if len(sys.argv) > 2 else os.path.join(ROOT, "docs", "analyses-results.md")
    if cmd == "check":
        sys.exit(check(doc))
    if cmd == "write":
        sys.exit(write(doc))
    if cmd == "self-test":
        sys.exit(self_test())
    raise SystemExit(__doc__)
