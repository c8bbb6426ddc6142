import { expect, test } from "bun:test";
import { heavyCommand, otherHostsCalled } from "../../src/tools/review/exec-command.ts";

const CASES: [command: string[], heavy: string | undefined, hosts: string[]][] = [
  [["cat", "/tmp/healthy"], undefined, []],
  [["/bin/grpc_health_probe", "-addr=:8080"], undefined, []],
  [["sh", "-c", "test -f /tmp/ready || exit 1"], undefined, []],
  [["sh", "-c", "ps aux | grep -q nginx"], 'a shell pipeline ("ps aux | grep -q nginx")', []],
  [["curl", "-f", "http://localhost:8080/healthz"], 'curl ("curl -f http://localhost:8080/healthz")', []],
  [["/usr/bin/wget", "-q", "-O-", "http://payments-db:80/"], 'wget ("/usr/bin/wget -q -O- http://payments-db:80/")', ["payments-db"]],
  [["sh", "-c", "curl -sf http://127.0.0.1:8080/ && curl -sf https://auth.example.com/ping"], 'curl ("curl -sf http://127.0.0.1:8080/ && curl -sf https://auth.example.com/ping")', ["auth.example.com"]],
  [["nc", "-z", "-w", "1", "postgres", "5432"], 'nc ("nc -z -w 1 postgres 5432")', ["postgres"]],
  [["bash", "-c", "psql -h $DB_HOST -c 'select 1'"], `psql ("psql -h $DB_HOST -c 'select 1'")`, ["$DB_HOST"]],
  [["pg_isready", "--host=orders-db", "-p", "5432"], undefined, ["orders-db"]],
  [["redis-cli", "-h", "localhost", "ping"], 'redis-cli ("redis-cli -h localhost ping")', []],
  [["python3", "/app/health.py"], 'python3 ("python3 /app/health.py")', []],
];

for (const [command, heavy, hosts] of CASES) {
  test(JSON.stringify(command), () => {
    expect(heavyCommand(command)).toBe(heavy);
    expect(otherHostsCalled(command)).toEqual(hosts);
  });
}
