package io.rdma4j.engine.internal;

import io.rdma4j.engine.Notification;
import io.rdma4j.engine.Notifications;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.Iterator;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;

/** The notifications peers sent here, in arrival order, until the user takes them. */
final class NotificationQueue implements Notifications {
    private final ReentrantLock lock = new ReentrantLock();
    private final Condition arrived = lock.newCondition();
    private final ArrayDeque<Notification> queue = new ArrayDeque<>();

    void add(Notification n) {
        lock.lock();
        try {
            queue.add(n);
            arrived.signalAll();
        } finally {
            lock.unlock();
        }
    }

    @Override
    public Notification poll() {
        lock.lock();
        try {
            return queue.poll();
        } finally {
            lock.unlock();
        }
    }

    @Override
    public Notification poll(Duration timeout) throws InterruptedException {
        long deadline = System.nanoTime() + timeout.toNanos();
        lock.lock();
        try {
            while (queue.isEmpty()) {
                long left = deadline - System.nanoTime();
                if (left <= 0) {
                    return null;
                }
                arrived.awaitNanos(left);
            }
            return queue.poll();
        } finally {
            lock.unlock();
        }
    }

    Notification awaitTag(long tag, Duration timeout) throws InterruptedException {
        long deadline = System.nanoTime() + timeout.toNanos();
        lock.lock();
        try {
            while (true) {
                for (Iterator<Notification> it = queue.iterator(); it.hasNext(); ) {
                    Notification n = it.next();
                    if (n.tag() == tag) {
                        it.remove();
                        return n;
                    }
                }
                long left = deadline - System.nanoTime();
                if (left <= 0) {
                    return null;
                }
                arrived.awaitNanos(left);
            }
        } finally {
            lock.unlock();
        }
    }

    @Override
    public int size() {
        lock.lock();
        try {
            return queue.size();
        } finally {
            lock.unlock();
        }
    }
}
