#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-only
"""Run rdma-core's pyverbs test suite and write one TAP line per test.

usage: pyverbs-tap.py --tests DIR --tap FILE [--todo FILE] [--prefix P]
                      [--test-timeout S] [--budget S] [--seed N]
                      [SUITE ARGS...]

DIR is the suite (tests/ of the rdma-core source, with pyverbs importable:
PYTHONPATH=BUILD/python); SUITE ARGS go to the suite's own parser
(--dev kite0 --gid N -v ...) and, after them, unittest test names.

Each test gives one line in FILE (appended):
  ok - P ID                      passed
  ok - P ID # SKIP reason        skipped by the suite (reason as given)
  not ok - P ID                  failed or errored (traceback on stdout)
  not ok - P ID # TODO reason    failed or errored, and listed in the
                                 --todo file: a known gap, with the issue
                                 item that will close it
A listed test that passes is "ok - P ID # TODO passes now: ..." so that
the list is pruned. A test that runs longer than --test-timeout seconds
is interrupted (an error). Once --budget seconds have passed, the tests
not yet run are "not ok ... (not run: time budget spent)".

The suite draws QP capacities, creation masks, message sizes, ... from
Python's random module: the seed (--seed, default a fresh one) is printed
so that a run can be repeated.
"""
import argparse
import importlib.machinery
import os
import random
import signal
import sys
import time
import traceback
import unittest


class TestTimeout(Exception):
    """A test ran longer than allowed."""


def read_todo(path):
    """The --todo file: 'TEST_ID | ISSUE ITEM | REASON' lines; # comments."""
    todo = {}
    if not path:
        return todo
    with open(path, encoding='utf-8') as f:
        for n, line in enumerate(f, 1):
            line = line.split('#', 1)[0].strip()
            if not line:
                continue
            parts = [p.strip() for p in line.split('|')]
            if len(parts) != 3 or not all(parts):
                sys.exit(f'{path}:{n}: want "TEST_ID | ISSUE ITEM | REASON"')
            todo[parts[0]] = f'{parts[2]} ({parts[1]})'
    return todo


def one_line(text):
    return ' '.join(str(text).split()).replace('#', 'No.')


class TapResult(unittest.TestResult):
    """Writes a TAP line when each test ends; counts the outcomes."""

    def __init__(self, tap, prefix, todo, test_timeout):
        super().__init__()
        self.tap = tap
        self.prefix = prefix
        self.todo = todo
        self.test_timeout = test_timeout
        self.counts = {'passed': 0, 'failed': 0, 'errors': 0,
                       'skipped': 0, 'todo': 0}
        self.todo_seen = set()
        self.t0 = 0.0
        self.outcome = None

    def emit(self, test, ok, directive=''):
        name = f'{self.prefix}{test.id()}'
        line = f'{"ok" if ok else "not ok"} - {name}{directive}'
        self.tap.write(line + '\n')
        self.tap.flush()
        print(f'{line}  [{time.monotonic() - self.t0:.1f}s]', flush=True)

    def startTest(self, test):
        super().startTest(test)
        self.t0 = time.monotonic()
        self.outcome = None
        signal.alarm(self.test_timeout)

    def stopTest(self, test):
        signal.alarm(0)
        super().stopTest(test)
        tid = test.id()
        kind, info = self.outcome or ('pass', '')
        if tid in self.todo:
            self.todo_seen.add(tid)
        if kind == 'skip':
            self.counts['skipped'] += 1
            self.emit(test, True, f' # SKIP {one_line(info) or "no reason given"}')
        elif kind == 'pass':
            self.counts['passed'] += 1
            extra = ''
            if tid in self.todo:
                extra = f' # TODO passes now: remove it from the list ({one_line(self.todo[tid])})'
            self.emit(test, True, extra)
        else:
            print(f'--- {tid}: {kind}\n{info}', flush=True)
            if tid in self.todo:
                self.counts['todo'] += 1
                self.emit(test, False, f' # TODO {one_line(self.todo[tid])}')
            else:
                self.counts['failed' if kind == 'failure' else 'errors'] += 1
                self.emit(test, False)

    def _set(self, kind, info):
        # The first failure of a test decides (tearDown may add more).
        if self.outcome is None or self.outcome[0] in ('pass', 'skip'):
            self.outcome = (kind, info)

    def addSuccess(self, test):
        super().addSuccess(test)
        if self.outcome is None:
            self.outcome = ('pass', '')

    def addSkip(self, test, reason):
        super().addSkip(test, reason)
        if self.outcome is None:
            self.outcome = ('skip', reason)

    def addError(self, test, err):
        super().addError(test, err)
        self._set('error', ''.join(traceback.format_exception(*err)))

    def addFailure(self, test, err):
        super().addFailure(test, err)
        self._set('failure', ''.join(traceback.format_exception(*err)))

    def addExpectedFailure(self, test, err):
        super().addExpectedFailure(test, err)
        self.outcome = ('pass', '')

    def addUnexpectedSuccess(self, test):
        super().addUnexpectedSuccess(test)
        self._set('failure', 'unexpected success')

    def addSubTest(self, test, subtest, err):
        super().addSubTest(test, subtest, err)
        if err is not None:
            kind = 'failure' if issubclass(err[0], test.failureException) else 'error'
            self._set(kind, f'{subtest.id()}:\n' +
                      ''.join(traceback.format_exception(*err)))


def flatten(suite):
    for t in suite:
        if isinstance(t, unittest.TestSuite):
            yield from flatten(t)
        else:
            yield t


def main():
    ap = argparse.ArgumentParser(add_help=False)
    ap.add_argument('--tests', required=True)
    ap.add_argument('--tap', required=True)
    ap.add_argument('--todo')
    ap.add_argument('--prefix', default='pyverbs: ')
    ap.add_argument('--test-timeout', type=int, default=120)
    ap.add_argument('--budget', type=int, default=0)
    ap.add_argument('--seed', type=int)
    ours, rest = ap.parse_known_args()

    tests_dir = os.path.abspath(ours.tests)
    sys.path.insert(0, tests_dir)
    # The suite's parser takes its options from sys.argv and leaves the
    # rest there: unittest names.
    sys.argv = [os.path.join(tests_dir, 'run_tests.py')] + rest
    from args_parser import parser
    parser.parse_args()
    names = [a for a in sys.argv[1:] if not a.startswith('-')]

    todo = read_todo(ours.todo)
    tests = importlib.machinery.SourceFileLoader(
        'tests', os.path.join(tests_dir, '__init__.py')).load_module()
    loader = unittest.TestLoader()
    if names:
        suite = loader.loadTestsFromNames(names, tests)
    else:
        suite = loader.loadTestsFromModule(tests)

    def on_alarm(signum, frame):
        raise TestTimeout(f'test ran longer than {ours.test_timeout}s')
    signal.signal(signal.SIGALRM, on_alarm)

    seed = ours.seed if ours.seed is not None else random.SystemRandom().randrange(2**31)
    print(f'pyverbs: random seed {seed} (--seed {seed} repeats this run)', flush=True)
    random.seed(seed)
    start = time.monotonic()
    with open(ours.tap, 'a', encoding='utf-8') as tap:
        result = TapResult(tap, ours.prefix, todo, ours.test_timeout)
        not_run = 0
        for test in flatten(suite):
            if ours.budget and time.monotonic() - start > ours.budget:
                tap.write(f'not ok - {ours.prefix}{test.id()} '
                          f'(not run: time budget of {ours.budget}s spent)\n')
                not_run += 1
                continue
            test(result)
        tap.flush()
    c = result.counts
    print(f'pyverbs: {c["passed"]} passed, {c["failed"]} failed, '
          f'{c["errors"]} errors, {c["skipped"]} skipped, {c["todo"]} todo '
          f'(known gaps), {not_run} not run, '
          f'{time.monotonic() - start:.0f}s', flush=True)
    stale = sorted(set(todo) - result.todo_seen)
    if stale and not names:
        print('pyverbs: listed in the todo file but not in the suite: ' +
              ', '.join(stale), flush=True)
    return 1 if c['failed'] or c['errors'] or not_run else 0


if __name__ == '__main__':
    sys.exit(main())
