// The checkpointer thread of a file store (store.ts): its own connection folds the WAL back into
// the database file with PASSIVE checkpoints, which never block the writer.
import { parentPort, workerData } from 'node:worker_threads';
import { engineOpener } from './sqlite.js';

const { path, engine, everyMs } = workerData as { path: string; engine?: string; everyMs: number };
const db = (await engineOpener(engine))(path);
db.exec('PRAGMA busy_timeout = 100');
const once = (): void => {
  try {
    db.exec('PRAGMA wal_checkpoint(PASSIVE)');
  } catch {
    // Busy or refused: the WAL keeps the data, the next pass (or the last close) folds it in.
  }
};
const timer = setInterval(once, everyMs);
parentPort!.on('message', () => {
  clearInterval(timer);
  db.close();
  parentPort!.close();
});
