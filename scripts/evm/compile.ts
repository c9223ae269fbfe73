/**
 * Compiles scripts/evm/TestToken.sol with solcjs (a devDependency) into
 * core/src/providers/evm/test-token.ts: the creation bytecode and ABI the development chain
 * deploys at start, so nothing is compiled at run time. Run after changing the contract:
 *   node scripts/evm/compile.ts
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
const solc = require('solc') as { compile(input: string): string; version(): string };
const source = readFileSync(new URL('./TestToken.sol', import.meta.url), 'utf8');
const output = JSON.parse(
  solc.compile(
    JSON.stringify({
      language: 'Solidity',
      sources: { 'TestToken.sol': { content: source } },
      settings: { optimizer: { enabled: true, runs: 200 }, outputSelection: { '*': { '*': ['abi', 'evm.bytecode.object'] } } },
    }),
  ),
) as {
  errors?: Array<{ severity: string; formattedMessage: string }>;
  contracts: Record<string, Record<string, { abi: unknown; evm: { bytecode: { object: string } } }>>;
};
const errors = (output.errors ?? []).filter((error) => error.severity === 'error');
if (errors.length) throw new Error(errors.map((error) => error.formattedMessage).join('\n'));
const contract = output.contracts['TestToken.sol']!.TestToken!;
const target = new URL('../../core/src/providers/evm/test-token.ts', import.meta.url);
writeFileSync(
  target,
  `// Made by scripts/evm/compile.ts from scripts/evm/TestToken.sol (solc ${solc.version()}); do not edit.
export const TEST_TOKEN_ABI = ${JSON.stringify(contract.abi)} as const;
export const TEST_TOKEN_BYTECODE = '0x${contract.evm.bytecode.object}' as const;
`,
);
console.log(`wrote ${target.pathname}`);
