// The agent service's answer (deviceAgentConfig) and machines' agent configs on both TabularStore
// backends (issue 33): the DuckDB store of the embedded default and PostgreSQL, against the store
// directly, with an Authorizer as the service has. The gRPC path and the CLI are covered with a spawned
// cloud by release-add.test.ts.
import test from 'ava';
import { Metadata } from '@grpc/grpc-js';
import { randomBytes } from 'node:crypto';
import { createKey, createMachine, createOrganization } from '../admin/tenancy.js';
import { Authorizer } from '../auth/authorizer.js';
import { TokenSigner } from '../auth/token.js';
import { tabularBackends } from '../testing/tabular-backends.js';
import { deviceAgentConfig } from './agent-service.js';
import { ensureMachineConfigTables, getMachineAgentConfig, setMachineAgentConfig } from './machine-agent-config.js';
import { addRelease, ensureReleaseTables, setChannel } from './releases.js';

const bearer = (token: string) => {
  const md = new Metadata();
  md.set('authorization', `Bearer ${token}`);
  return md;
};

for (const backend of tabularBackends(test))
  test(`${backend.name}: a machine's saved agent config and channel give its agent the release to run; other organizations are refused`, async (t) => {
    const store = await backend.open(t);
    await ensureReleaseTables(store);
    await ensureMachineConfigTables(store);
    const tokens = new TokenSigner(randomBytes(32));
    const authorizer = new Authorizer(store, tokens);
    const org = await createOrganization(store, { name: 'fleet' });
    const machine = await createMachine(store, { org: org.id, name: 'rover' });
    const other = await createOrganization(store, { name: 'other' });
    const otherKey = await createKey(store, { org: other.id, role: 'owner' });
    for (const version of ['1.0.0', '1.1.0']) {
      await addRelease(store, { subsystem: 'agent', version, platform: 'linux/amd64', url: `https://dl.example.com/${version}`, sha256: 'a'.repeat(64) });
    }
    await setChannel(store, { subsystem: 'agent', channel: 'stable', version: '1.0.0' });
    await setMachineAgentConfig(store, { machine: machine.machine_id, config: { agent: { version_control: { agent: 'stable' } } } });
    t.deepEqual(await getMachineAgentConfig(store, machine.machine_id), { agent: { version_control: { agent: 'stable' } } });

    const asPart = bearer(tokens.sign(machine.part_id, 'part'));
    const request = { partId: machine.part_id, hostInfo: { platform: 'linux/amd64', distro: '', tags: [] }, requested: {} } as never;
    const answer = await deviceAgentConfig(store, authorizer, request, asPart);
    t.is(answer.updateInfo.agent?.version, '1.0.0');
    t.deepEqual(answer.agentConfig, { version_control: { agent: 'stable' } });
    // Moving the channel moves the agent.
    await setChannel(store, { subsystem: 'agent', channel: 'stable', version: '1.1.0' });
    t.is((await deviceAgentConfig(store, authorizer, request, asPart)).updateInfo.agent?.version, '1.1.0');
    await t.throwsAsync(deviceAgentConfig(store, authorizer, request, bearer(tokens.sign(otherKey.id, 'api-key'))), { message: /another organization/ });
    await t.throwsAsync(setMachineAgentConfig(store, { machine: machine.machine_id, config: { agent: { version_control: 5 } } }), {
      message: /version_control/,
    });
  });
