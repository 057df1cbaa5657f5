// The contract suite (test/contract/suites/) on SQLite.
import { registerContract } from './suites/index.ts';

registerContract('sqlite');
