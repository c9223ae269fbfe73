import { loadConfig } from '../config.ts';
import { setPasswordHashCost } from '../domains/auth/passwords.ts';
import { seedDatabase } from '../seed/demo.ts';
import type { TCommand } from './command.ts';

/** What a first start needs in the database; the start scripts run it before the core when SEED is on. */
export const SEED_COMMANDS: Record<string, TCommand> = {
  seed: (db) => {
    const config = loadConfig();
    // The demo account's password is hashed at the cost the core would use.
    setPasswordHashCost(config.PASSWORD_SCRYPT_LN);
    return seedDatabase(db, config);
  },
};
