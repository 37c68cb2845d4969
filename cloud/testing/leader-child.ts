// Test program: one candidate of a leader election (cloud/store/pg-leader.ts) in a process of its own,
// so that a test can kill -9 the leader. Prints `serving <pid>` once it has joined, then `leader` and
// `follower` as its role changes. Usage: leader-child.ts <postgres url> <duty name>
import { LeaderElection } from '../store/pg-leader.js';

const [url, name] = process.argv.slice(2);
const election = LeaderElection.start({
  url,
  name,
  onLeader: () => console.log('leader'),
  onFollower: () => console.log('follower'),
  onError: (err) => console.error(`election error: ${err.message}`),
});
console.log(`serving ${process.pid}`);
process.on('SIGTERM', () => void election.stop().then(() => process.exit(0)));
