#!/usr/bin/env python3
"""A TCP relay that delays every chunk, both ways: latency for the multi-host test on
kernels without tc netem (sch_netem).

    delay_relay.py LISTEN_HOST:PORT UPSTREAM_HOST:PORT DELAY_MS JITTER_MS

Each chunk read from one side is written to the other DELAY_MS +- JITTER_MS after it
arrived, in order (a chunk never overtakes the one before it). TLS passes through untouched:
the relay sees bytes, not messages.
"""

import asyncio
import random
import sys


async def pump(reader, writer, delay, jitter):
    queue = asyncio.Queue()
    loop = asyncio.get_running_loop()

    async def deliver():
        while True:
            due, data = await queue.get()
            if data is None:
                break
            wait = due - loop.time()
            if wait > 0:
                await asyncio.sleep(wait)
            writer.write(data)
            await writer.drain()
        writer.close()

    sender = asyncio.create_task(deliver())
    last_due = 0.0
    try:
        while True:
            data = await reader.read(65536)
            if not data:
                break
            due = loop.time() + max(0.0, delay + random.uniform(-jitter, jitter))
            last_due = max(last_due, due)
            queue.put_nowait((last_due, data))
    except (ConnectionError, OSError):
        pass
    queue.put_nowait((last_due, None))
    try:
        await sender
    except (ConnectionError, OSError):
        pass


async def handle(client_reader, client_writer, upstream, delay, jitter):
    host, port = upstream
    try:
        up_reader, up_writer = await asyncio.open_connection(host, port)
    except OSError:
        client_writer.close()
        return
    await asyncio.gather(
        pump(client_reader, up_writer, delay, jitter),
        pump(up_reader, client_writer, delay, jitter),
    )


def split(addr):
    host, _, port = addr.rpartition(":")
    return host, int(port)


async def main():
    listen, upstream = split(sys.argv[1]), split(sys.argv[2])
    delay, jitter = float(sys.argv[3]) / 1000, float(sys.argv[4]) / 1000
    server = await asyncio.start_server(
        lambda r, w: handle(r, w, upstream, delay, jitter), listen[0], listen[1]
    )
    print(f"relay {sys.argv[1]} -> {sys.argv[2]}, {sys.argv[3]} +- {sys.argv[4]} ms", flush=True)
    async with server:
        await server.serve_forever()


if __name__ == "__main__":
    asyncio.run(main())
