"""Drives the PostgreSQL endpoint with psycopg2 and prints what it saw as one JSON object.

pg-psycopg2.test.ts runs this against a live endpoint and asserts on the output. Arguments come from the
environment: PGPORT, PGUSER, PGPASSWORD, SECRET (a component name only another organisation has).
"""
import json
import os
import threading
import time

import psycopg2

out = {}
conn = psycopg2.connect(host='127.0.0.1', port=int(os.environ['PGPORT']), user=os.environ['PGUSER'],
                        password=os.environ['PGPASSWORD'], dbname='sensorData', application_name='psycopg2-check')
out['encoding'] = conn.encoding
out['server_version'] = conn.server_version
cur = conn.cursor()

cur.execute('SELECT component_name, count(*) FROM readings WHERE component_name = %s AND time_received >= %s GROUP BY 1',
            ('thermo', '2020-01-01'))
out['params'] = {'rows': [list(r) for r in cur.fetchall()], 'columns': [d.name for d in cur.description]}

cur.execute('SELECT time_received, data, tags FROM readings WHERE component_name = %s ORDER BY time_received LIMIT 1', ('thermo',))
t, data, tags = cur.fetchone()
out['types'] = {'time': t.isoformat(), 'tz': str(t.tzinfo), 'data': data, 'tags': tags}

# A server-side cursor: DECLARE ... CURSOR, then FETCH FORWARD itersize at a time.
named = conn.cursor(name='many')
named.itersize = 7
named.execute('SELECT x FROM range(50) r(x) WHERE %s', (True,))
out['server_side'] = [r[0] for r in named]
named.close()
conn.rollback()

cur.execute('SELECT count(*) FROM readings WHERE component_name = %s', (os.environ['SECRET'],))
out['other_org_rows'] = cur.fetchone()[0]
cur.execute('SELECT table_name FROM information_schema.tables')
out['tables'] = [r[0] for r in cur.fetchall()]
conn.rollback()
try:
    cur.execute('SELECT * FROM pg_catalog.pg_stat_activity')
    out['catalog_refused'] = None
except psycopg2.Error as e:
    out['catalog_refused'] = {'code': e.pgcode, 'message': str(e).strip()}
conn.rollback()


def cancel_soon():
    time.sleep(1.0)
    conn.cancel()


threading.Thread(target=cancel_soon).start()
try:
    cur.execute('SELECT count(*) FROM range(1000000000000) a')
    out['cancel'] = {'code': None, 'rows': cur.fetchall()}
except psycopg2.Error as e:
    out['cancel'] = {'code': e.pgcode, 'message': str(e).strip()}
conn.rollback()
cur.execute('SELECT 1')
out['after_cancel'] = cur.fetchone()[0]
conn.close()
print(json.dumps(out))
