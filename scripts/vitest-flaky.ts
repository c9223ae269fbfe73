/**
 * A vitest reporter (scripts/test.sh): writes the tests that failed and then passed on their
 * retry (CI: vitest.config.ts) to the file VITEST_FLAKY_FILE names, a line each, so the
 * summary names them as Playwright's does.
 */
import { appendFileSync } from 'node:fs';
import { relative } from 'node:path';
import type { Reporter, TestCase } from 'vitest/node';

export default class FlakyReporter implements Reporter {
  onTestCaseResult(testCase: TestCase) {
    const file = process.env.VITEST_FLAKY_FILE;
    if (!file || !testCase.diagnostic()?.flaky) return;
    appendFileSync(file, `${relative(process.cwd(), testCase.module.moduleId)} > ${testCase.fullName}\n`);
  }
}
