// Background tasks, one file per task beside this one, named after what it does. Jobs are
// enqueued from SQL in the same transaction as the write that causes them.
import type { TaskList } from 'graphile-worker';

export const taskList: TaskList = {};
