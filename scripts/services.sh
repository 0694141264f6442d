#!/usr/bin/env bash
# Start the services the tests use (PostgreSQL, MariaDB, Redis) where this machine
# has them installed and they are not answering. Never fails: a missing service
# makes its tests skip locally, and fail under CI=true.
set -u

answers() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

wait_for() {
  for _ in $(seq 1 30); do answers "$1" && return 0; sleep 1; done
  echo "services: port $1 still not answering" >&2
}

if ! answers 5432 && command -v pg_ctlcluster >/dev/null 2>&1; then
  echo "services: starting PostgreSQL"
  pg_ctlcluster --skip-systemctl-redirect "$(ls /etc/postgresql | head -n1)" main start || true
  wait_for 5432
fi
if ! answers 3306 && [ -x /usr/sbin/mariadbd ]; then
  echo "services: starting MariaDB"
  start-stop-daemon --start --oknodo --background --exec /usr/sbin/mariadbd || true
  wait_for 3306
fi
if ! answers 6379 && command -v redis-server >/dev/null 2>&1; then
  echo "services: starting Redis"
  redis-server --daemonize yes --bind 127.0.0.1 -::1 --port 6379 --save "" --appendonly no \
    --dir /var/lib/redis --logfile /var/log/redis/ci.log || true
  wait_for 6379
fi
exit 0
