#!/usr/bin/env python3
"""Tests of check_figures.py: a matching block passes, a stale one fails,
`...` elides lines, and --update rewrites a stale block. Run with
`python3 -m unittest discover -s tools/docs`."""

import io
import os
import stat
import sys
import tempfile
import textwrap
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import check_figures  # noqa: E402

# A stand-in for the CLI: prints the same lines every time, and one line
# that depends on its first argument.
FAKE_CLI = """#!/usr/bin/env bash
echo "header line"
echo "  rate    $1 req/s"
echo "  TTFT    20.16   17.41"
echo "footer line"
"""


class CheckFiguresTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.root = self.tmp.name
        os.makedirs(os.path.join(self.root, "docs"))
        self.cli = os.path.join(self.root, "fake-servesim")
        with open(self.cli, "w") as f:
            f.write(FAKE_CLI)
        os.chmod(self.cli, os.stat(self.cli).st_mode | stat.S_IEXEC)

    def tearDown(self):
        self.tmp.cleanup()

    def write_doc(self, name, text):
        path = os.path.join(self.root, name)
        with open(path, "w") as f:
            f.write(textwrap.dedent(text))
        return path

    def run_check(self, update=False):
        out = io.StringIO()
        failures = check_figures.check(self.root, self.cli, update=update, out=out)
        return failures, out.getvalue()

    def test_matching_blocks_pass(self):
        self.write_doc("README.md", """\
            <!-- figure: servesim 10 -->
            ```text
            header line
              rate 10 req/s
              TTFT    20.16     17.41
            footer line
            ```
            """)
        self.write_doc("docs/page.md", """\
            <!-- figure: servesim 3 -->
            ```
            ...
            TTFT 20.16 17.41
            ...
            ```
            <!-- figure: servesim 3 -->
            ```
            header line
              rate 3 ...
            ...
            ```
            """)
        failures, report = self.run_check()
        self.assertEqual(failures, 0, report)
        self.assertIn("3 of 3 figures match", report)

    def test_stale_block_fails_with_its_line(self):
        self.write_doc("README.md", "text\n\n<!-- figure: servesim 10 -->\n"
                       "```\n...\n  TTFT 19.99 17.41\n...\n```\n")
        failures, report = self.run_check()
        self.assertEqual(failures, 1)
        self.assertIn("README.md:3", report)
        self.assertIn("TTFT 19.99 17.41", report)

    def test_left_out_lines_need_an_ellipsis(self):
        # Quoting the first and last lines without `...` between them is a
        # claim that nothing comes between: it fails.
        self.write_doc("README.md", "<!-- figure: servesim 10 -->\n"
                       "```\nheader line\nfooter line\n```\n")
        failures, report = self.run_check()
        self.assertEqual(failures, 1, report)
        self.assertIn("not in this order or not adjacent", report)

    def test_a_block_must_quote_the_whole_output_unless_trimmed(self):
        self.write_doc("README.md", "<!-- figure: servesim 10 -->\n"
                       "```\nheader line\n  rate 10 req/s\n```\n")
        failures, _ = self.run_check()
        self.assertEqual(failures, 1)

    def test_update_rewrites_numbers_and_keeps_the_trim(self):
        path = self.write_doc("docs/page.md", """\
            intro
            <!-- figure: servesim 7 -->
            ```
            ...
              rate 5 req/s
              TTFT 1.00 2.00
            ...
            ```
            <!-- figure: servesim 8 -->
            ```
            stale
            ```
            """)
        failures, report = self.run_check(update=True)
        self.assertEqual(failures, 0, report)
        with open(path) as f:
            text = f.read()
        self.assertIn("...\n  rate    7 req/s\n  TTFT    20.16   17.41\n...", text)
        self.assertIn("```\nheader line\n  rate    8 req/s\n", text)
        failures, report = self.run_check()
        self.assertEqual(failures, 0, report)

    def test_marker_without_block_is_an_error(self):
        self.write_doc("README.md", "<!-- figure: servesim 1 -->\ntext\n")
        failures, report = self.run_check()
        self.assertEqual(failures, 1)
        self.assertIn("must be followed by a fenced block", report)

    def test_only_the_word_servesim_is_replaced(self):
        cmd = check_figures.shell_command(
            "servesim run x.json && servesim-calibrate y && ls build/servesim", "/b/cli")
        self.assertEqual(cmd, "/b/cli run x.json && /b/servesim-calibrate y && ls build/servesim")


if __name__ == "__main__":
    unittest.main()
