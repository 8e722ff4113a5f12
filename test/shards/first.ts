// One of the processes that share the test files between them: see test/support/shard.ts.
import '../support/shard.ts';
