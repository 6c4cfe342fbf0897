// The writer thread of a file store (store-thread.ts): the only connection that writes the
// SQLite file. Batches are committed and answered in the order they came.
import { parentPort, workerData } from 'node:worker_threads';
import { engineOpener } from './sqlite.js';
import { RelayStore, type StoreOptions } from './store.js';
import { unpack, type WriterReply, type WriterRequest } from './store-thread.js';
import { isStoreUnavailable } from './store-fault.js';

const port = parentPort!;
// The relay's own connection runs the checkpointer; this one only writes and reads.
const opts = workerData as StoreOptions;
const store = RelayStore.open({ ...opts, checkpoint: false }, await engineOpener(opts.engine));
// D47: a checkpoint committed here crosses to the relay's thread, which puts it on the stream.
store.onCheckpoint((checkpoint) => port.postMessage({ id: 0, checkpoint } satisfies WriterReply));

/** The last batch the file refused (D38), by request id and reason: one posted behind it is refused too. */
let refused: { id: number; message: string } | undefined;

function answer(r: WriterRequest): unknown {
  switch (r.op) {
    case 'admit':
      if (r.after !== undefined && r.after === refused?.id) throw new QueuedBehind(refused.message);
      return store.admitAll(unpack(r.batch));
    case 'open':
      return undefined;
    case 'probe':
      store.probe();
      return undefined;
    case 'checkpoint':
      return store.checkpointIdle();
    case 'close':
      store.close();
      return undefined;
  }
}

/** A batch refused because the one before it was: the same fault (D38), nothing of it written. */
class QueuedBehind extends Error {}

port.on('message', (r: WriterRequest) => {
  let reply: WriterReply;
  try {
    reply = { id: r.id, ok: true, value: answer(r) };
  } catch (err) {
    // A write the file cannot make now crosses as such (an error's class does not survive the copy).
    const fault = isStoreUnavailable(err) || err instanceof QueuedBehind;
    const message = (err as Error).message;
    if (r.op === 'admit' && fault) refused = { id: r.id, message };
    reply = { id: r.id, ok: false, message, ...(fault ? { fault: true } : {}) };
  }
  port.postMessage(reply);
  if (r.op === 'close') port.close();
});
