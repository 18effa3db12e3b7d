"""The connections of a PostgresStore (storage.pg_pool): bounded, queued in order, closed cleanly; real server."""

from __future__ import annotations

import asyncio

import asyncpg
import pytest

from storage import PostgresStore, StoreClosed
from storage.pg_pool import Pool, PoolClosed
from tests.pg import fresh_database


async def _pids(conn: asyncpg.Connection) -> int:
    return int(
        await conn.fetchval(
            "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND application_name = 'p'"
        )
    )


async def test_callers_beyond_max_size_wait_and_each_is_served():
    async with fresh_database() as dsn:
        pool = Pool(lambda: asyncpg.connect(dsn, server_settings={"application_name": "p"}), 2)
        in_use = 0
        most = 0

        async def one(i: int) -> int:
            nonlocal in_use, most
            async with pool.acquire() as conn:
                in_use += 1
                most = max(most, in_use)
                value = await conn.fetchval("SELECT $1::int FROM pg_sleep(0.01)", i)
                in_use -= 1
                return int(value)

        assert await asyncio.gather(*(one(i) for i in range(12))) == list(range(12))
        assert most == 2
        async with pool.acquire() as conn:
            assert await _pids(conn) == 2, "two connections opened, then reused"
        await pool.close()


async def test_a_caller_cancelled_while_waiting_takes_no_connection():
    async with fresh_database() as dsn:
        pool = Pool(lambda: asyncpg.connect(dsn), 1)
        held = await pool.get()
        waiting = asyncio.ensure_future(pool.get())
        later = asyncio.ensure_future(pool.get())
        await asyncio.sleep(0.05)
        waiting.cancel()
        pool.put(held)  # handed to the first caller still waiting: ``later``
        got = await asyncio.wait_for(later, 5)
        assert got is held and waiting.cancelled()
        pool.put(got)
        # handed over and cancelled in the same turn: the connection goes to the next caller
        held = await pool.get()
        first = asyncio.ensure_future(pool.get())
        second = asyncio.ensure_future(pool.get())
        await asyncio.sleep(0.05)
        pool.put(held)
        first.cancel()
        assert await asyncio.wait_for(second, 5) is held
        pool.put(held)
        await pool.close()


async def test_a_connection_the_server_closed_frees_its_slot():
    async with fresh_database() as dsn:
        store = PostgresStore(dsn, max_size=1)
        await store.setup()
        admin = await asyncpg.connect(dsn)
        try:
            await admin.execute(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                "WHERE datname = current_database() AND application_name = 'warden'"
            )
            pool = await store._connection_pool()
            for _ in range(100):  # the store's connection sees its end when the server's message arrives
                if all(c.is_closed() for c in pool._idle):
                    break
                await asyncio.sleep(0.05)
            assert await store.get_run("nope") is None, "a new connection replaced the closed one"
        finally:
            await admin.close()
            await store.aclose()


async def test_close_waits_for_connections_in_use_and_later_callers_are_refused():
    async with fresh_database() as dsn:
        pool = Pool(lambda: asyncpg.connect(dsn), 3)
        busy = await pool.get()
        idle = await pool.get()
        pool.put(idle)
        waiter_pool = Pool(lambda: asyncpg.connect(dsn), 1)
        closing = asyncio.ensure_future(pool.close())
        for _ in range(100):
            if idle.is_closed():
                break
            await asyncio.sleep(0.05)
        assert idle.is_closed() and not busy.is_closed() and not closing.done()
        with pytest.raises(PoolClosed):
            await pool.get()
        pool.put(busy)
        await asyncio.wait_for(closing, 5)
        assert busy.is_closed()
        # a caller queued when the pool closes is refused, not left waiting
        only = await waiter_pool.get()
        queued = asyncio.ensure_future(waiter_pool.get())
        await asyncio.sleep(0.05)
        closing = asyncio.ensure_future(waiter_pool.close())
        with pytest.raises(PoolClosed):
            await asyncio.wait_for(queued, 5)
        waiter_pool.put(only)
        await asyncio.wait_for(closing, 5)


async def test_a_store_closed_while_a_call_waits_for_a_connection_raises_store_closed():
    async with fresh_database() as dsn:
        store = PostgresStore(dsn, max_size=1)
        pool = await store._connection_pool()
        held = await pool.get()
        call = asyncio.ensure_future(store.get_run("x"))
        await asyncio.sleep(0.05)
        closing = asyncio.ensure_future(store.aclose())
        with pytest.raises(StoreClosed):
            await asyncio.wait_for(call, 5)
        pool.put(held)
        await asyncio.wait_for(closing, 5)


async def test_connections_idle_past_their_lifetime_close_down_to_min_size():
    async with fresh_database() as dsn:
        pool = Pool(
            lambda: asyncpg.connect(dsn, server_settings={"application_name": "p"}), 4, min_size=1, idle_lifetime=0.2
        )
        held = [await pool.get() for _ in range(3)]
        for conn in held:
            pool.put(conn)
        async with pool.acquire() as conn:
            assert await _pids(conn) == 3
        await asyncio.sleep(0.6)
        async with pool.acquire() as conn:
            for _ in range(50):  # the server ends a closed connection's backend a moment later
                if await _pids(conn) == 1:
                    break
                await asyncio.sleep(0.1)
            assert await _pids(conn) == 1, "the two idle past their lifetime were closed; min_size stays"
        assert len(pool._all) == 1
        await pool.close()


async def test_take_hands_out_an_idle_connection_without_waiting_and_never_a_closed_one():
    async with fresh_database() as dsn:
        pool = Pool(lambda: asyncpg.connect(dsn, server_settings={"application_name": "p"}), 2)
        assert pool.take() is None  # none idle: a caller awaits get()
        first, second = await pool.get(), await pool.get()
        pool.put(first)
        pool.put(second)
        second.terminate()
        assert pool.take() is first  # the closed one (returned last) is skipped and its slot freed
        assert pool.take() is None
        third = await pool.get()  # a new one in the freed slot
        assert third is not first and not third.is_closed()
        pool.put(first)
        pool.put(third)
        await pool.close()
        assert pool.take() is None and first.is_closed() and third.is_closed()
