// Loaded before every test file (bunfig.toml [test] preload): hooks here span the whole run.
import { afterAll } from 'bun:test';
import { removeTempDirs } from './temp-dir.ts';

afterAll(removeTempDirs);
