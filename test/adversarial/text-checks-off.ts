// Imported first by the adversarial tests: the text checks (read-statement.ts, scoped-tx.ts) are
// turned off before any module reads the switch, so only the database or the engine can refuse.
process.env.APSUP_UNSAFE_DISABLE_TEXT_CHECKS = '1';
