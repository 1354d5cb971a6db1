// Runs simulation seeds with every reach for real time, randomness and sockets trapped, in a
// process of its own (other test files' brokers would otherwise be caught too), and prints what
// it caught as JSON: { reaches: string[], seeds: number }.
import { runSeed } from '../../src/sim/run.ts';
import { RealTimeTrap } from './real-time-trap.ts';

const seeds = process.argv.slice(2).map(Number);
const trap = new RealTimeTrap();
trap.install();
for (const seed of seeds) await runSeed({ seed });
trap.uninstall();
console.log(JSON.stringify({ reaches: trap.reaches, seeds: seeds.length }));
