"""The Python half of `npm run bench:python` (scripts/bench/python-client.ts starts it): uploads POINTS
tabular points with platform_sdk in batches of BATCH, then reads them all back with
tabular_data_by_filter (pages of PAGE) and with one tabular_data_by_sql query. Prints one JSON line of
seconds. Arguments: address key_id key org_id part_id component points batch page."""

import asyncio
import json
import sys
import time
from datetime import datetime, timedelta, timezone

from platform_sdk import CloudClient, Filter, Order


async def main(address, key_id, key, org_id, part_id, component, points, batch, page):
    t0 = datetime(2026, 1, 1, tzinfo=timezone.utc)
    client = await CloudClient.create(service_host=address, api_key_id=key_id, api_key=key, insecure=True)
    data = client.data_client
    try:
        start = time.perf_counter()
        for b in range(points // batch):
            items, times = [], []
            for i in range(batch):
                n = b * batch + i
                items.append({"readings": {"temperature": 20 + (n % 100) / 10, "humidity": n % 97}})
                t = t0 + timedelta(milliseconds=n * 2)
                times.append((t, t + timedelta(milliseconds=1)))
            await data.tabular_data_capture_upload(items, part_id, "rdk:component:sensor", component, "Readings", times)
        upload_s = time.perf_counter() - start

        start = time.perf_counter()
        read, last = 0, None
        while True:
            rows, _, last = await data.tabular_data_by_filter(
                Filter(component_name=component), limit=page, sort_order=Order.ORDER_ASCENDING, last=last
            )
            if not rows:
                break
            read += len(rows)
        filter_s = time.perf_counter() - start

        start = time.perf_counter()
        docs = await data.tabular_data_by_sql(
            org_id, f"SELECT time_requested, data FROM readings WHERE component_name = '{component}'"
        )
        sql_s = time.perf_counter() - start
        print(json.dumps({"upload_s": upload_s, "filter_s": filter_s, "sql_s": sql_s, "filter_rows": read, "sql_rows": len(docs)}))
    finally:
        await client.close()


if __name__ == "__main__":
    a = sys.argv[1:]
    asyncio.run(main(a[0], a[1], a[2], a[3], a[4], a[5], int(a[6]), int(a[7]), int(a[8])))
