// The contract suite (test/contract/suites/) on MySQL (MariaDB).
import { registerContract } from './suites/index.ts';

registerContract('mysql');
