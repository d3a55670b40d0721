package io.rdma4j.engine.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import org.junit.jupiter.api.Test;

/** A progress thread's inbox: nothing lost, oldest first per producer, and an item taken may be handed over again. */
class InboxTest {
    private static final class Item extends LaneWork {
        final int producer;
        final int seq;

        Item(int producer, int seq) {
            this.producer = producer;
            this.seq = seq;
        }
    }

    private static List<Item> take(Inbox in) {
        List<Item> out = new ArrayList<>();
        LaneWork w = in.takeAll();
        while (w != null) {
            LaneWork o = w;
            w = o.next;
            o.next = null;
            out.add((Item) o);
        }
        return out;
    }

    @Test
    void givesItemsBackOldestFirst() {
        Inbox in = new Inbox();
        assertTrue(in.isEmpty());
        assertNull(in.takeAll());
        Item a = new Item(0, 0);
        Item b = new Item(0, 1);
        Item c = new Item(0, 2);
        in.push(a);
        in.push(b);
        in.push(c);
        assertEquals(List.of(a, b, c), take(in));
        assertTrue(in.isEmpty());
        in.push(b); // taken items go back in, alone
        assertEquals(List.of(b), take(in));
        assertNull(b.next);
    }

    @Test
    void losesNothingFromConcurrentProducers() throws InterruptedException {
        Inbox in = new Inbox();
        int producers = 4;
        int each = 50_000;
        CountDownLatch go = new CountDownLatch(1);
        List<Thread> threads = new ArrayList<>();
        for (int p = 0; p < producers; p++) {
            int id = p;
            threads.add(Thread.ofPlatform().start(() -> {
                try {
                    go.await();
                } catch (InterruptedException e) {
                    return;
                }
                for (int i = 0; i < each; i++) {
                    in.push(new Item(id, i));
                }
            }));
        }
        go.countDown();
        int[] next = new int[producers];
        int seen = 0;
        long deadline = System.nanoTime() + 60_000_000_000L;
        while (seen < producers * each && System.nanoTime() < deadline) {
            for (Item it : take(in)) {
                assertEquals(next[it.producer], it.seq, "producer " + it.producer + "'s items out of order");
                next[it.producer]++;
                seen++;
            }
        }
        for (Thread t : threads) {
            t.join();
        }
        seen += take(in).size();
        assertEquals(producers * each, seen);
        assertTrue(in.isEmpty());
        Item last = new Item(9, 9);
        in.push(last);
        assertSame(last, in.takeAll());
    }
}
