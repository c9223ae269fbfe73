import type { TSeedSystem } from '../../domains/payments/catalogue.ts';
import { DEV_CHAIN_ID } from './chain.ts';

/*
 * The EVM deposit system a database gets once EVM_RPC_URL is configured (seed/demo.ts): Ether,
 * USDT and USDC to the user's one address on the chain. Data, not code: an operator changes its
 * terms (payments:system:price), the confirmations among them, afterwards.
 */

/** The networks named by their chain id; another is "EVM chain <id>". */
const NETWORKS: Record<number, { ru: string; en: string }> = {
  1: { ru: 'Эфириум', en: 'Ethereum' },
  11155111: { ru: 'Эфириум Sepolia (тестовая сеть)', en: 'Ethereum Sepolia (testnet)' },
  17000: { ru: 'Эфириум Holesky (тестовая сеть)', en: 'Ethereum Holesky (testnet)' },
  [DEV_CHAIN_ID]: { ru: 'Эфириум (локальная сеть разработки)', en: 'Ethereum (local development chain)' },
};

/** The deposit system of the chain: 2 confirmations on the development chain (blocks come when asked), 12 elsewhere. */
export function evmPaymentSystems(chainId: number): TSeedSystem[] {
  const confirmations = chainId === DEV_CHAIN_ID ? 2 : 12;
  return [
    {
      direction: 'deposit',
      id: 'ethereum',
      provider: 'evm',
      names: NETWORKS[chainId] ?? { ru: `EVM-сеть ${chainId}`, en: `EVM chain ${chainId}` },
      logo: '/image/payments/chain.svg',
      level: 0,
      fields: [],
      currencies: {
        ETH: ['0', '0', '0.001', '200', confirmations],
        USDT: ['0', '0', '1', '500000', confirmations],
        USDC: ['0', '0', '1', '500000', confirmations],
      },
    },
  ];
}
