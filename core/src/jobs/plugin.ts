import fp from 'fastify-plugin';
import type { TJobName } from './names.ts';
import { listJobs, type TJobDeps } from './list.ts';
import { createScheduler, type TScheduler } from './scheduler.ts';

declare module 'fastify' {
  interface FastifyInstance {
    jobs: TScheduler;
  }
}

/** The core's timed jobs: the scheduler starts once the app is ready and stops (waiting for its runs) at close. */
export default fp<TJobDeps & { enabled: readonly TJobName[]; now: () => Date }>(
  async (app, { enabled, now, ...deps }) => {
    const scheduler = createScheduler({ db: app.db, now, log: app.log, jobs: listJobs(deps), enabled });
    app.decorate('jobs', scheduler);
    app.addHook('onReady', async () => scheduler.start());
    app.addHook('onClose', () => scheduler.stop());
  },
  { name: 'jobs', dependencies: ['db', 'mail', 'events'] },
);
