package io.rdma4j.ibverbs;

import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import io.rdma4j.ClosedException;
import io.rdma4j.ibverbs.ffi.VerbsH;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * Calls on closed objects and bad arguments fail in Java, before any native call. The context here wraps zeroed memory
 * (a stand-in that any native call would trip over), so a method that reached native code would crash the test JVM.
 */
class ClosedAndBadInputTest {
    private static final Set<String> ALLOWED_WHEN_CLOSED = Set.of(
            "close",
            "isClosed",
            "toString",
            "hashCode",
            "equals",
            "deviceName",
            "wrapUnowned",
            "open",
            "getClass",
            "notify",
            "notifyAll",
            "wait");

    /** Invokes every public instance method of {@code o} with placeholder arguments and expects a ClosedException. */
    static void everyPublicCallFailsClosed(Object o) {
        int checked = 0;
        for (Method m : o.getClass().getMethods()) {
            if (Modifier.isStatic(m.getModifiers())
                    || ALLOWED_WHEN_CLOSED.contains(m.getName())
                    || m.getDeclaringClass() == Object.class) {
                continue;
            }
            Object[] args = new Object[m.getParameterCount()];
            Class<?>[] types = m.getParameterTypes();
            for (int i = 0; i < args.length; i++) {
                args[i] = placeholder(types[i]);
            }
            try {
                m.invoke(o, args);
                fail(m + " on a closed " + o.getClass().getSimpleName() + " did not fail");
            } catch (InvocationTargetException e) {
                if (!(e.getCause() instanceof ClosedException)) {
                    throw new AssertionError(
                            m + " failed with " + e.getCause() + " instead of ClosedException", e.getCause());
                }
                assertTrue(
                        e.getCause().getMessage().contains("is closed"),
                        e.getCause().getMessage());
            } catch (IllegalAccessException e) {
                throw new AssertionError(e);
            }
            checked++;
        }
        assertTrue(checked > 0);
    }

    static Object placeholder(Class<?> t) {
        if (t == int.class) {
            return 1;
        }
        if (t == long.class) {
            return 0L;
        }
        if (t == boolean.class) {
            return false;
        }
        if (t == byte[].class) {
            return new byte[16];
        }
        if (t == QpAttr.class) {
            return new QpAttr().state(VerbsH.IBV_QPS_INIT);
        }
        if (t == AhAttr.class) {
            return new AhAttr();
        }
        if (t == MemorySegment.class) {
            return Arena.global().allocate(64);
        }
        return null;
    }

    @Test
    void everyPublicCallOnAClosedContextIsAClearError() {
        MemorySegment fake = Arena.ofAuto().allocate(VerbsH.IBV_CONTEXT.byteSize(), 8);
        Context ctx = Context.wrapUnowned(fake, "fake0");
        ctx.close();
        ctx.close(); // idempotent
        everyPublicCallFailsClosed(ctx);
    }

    @Test
    void everyPublicCallOnClosedWorkRequestsAndCompletionsIsAClearError() {
        SendWr s = new SendWr(2);
        s.close();
        everyPublicCallFailsClosed(s);
        RecvWr r = new RecvWr(2);
        r.close();
        everyPublicCallFailsClosed(r);
        WorkCompletions w = new WorkCompletions(4);
        w.close();
        everyPublicCallFailsClosed(w);
        DeviceList l = DeviceList.open();
        l.close();
        assertThrows(ClosedException.class, l::devices);
        assertThrows(ClosedException.class, () -> l.get(null));
    }

    @Test
    void workRequestArgumentsAreCheckedBeforePosting() {
        try (SendWr s = new SendWr(2);
                RecvWr r = new RecvWr(1)) {
            assertThrows(IndexOutOfBoundsException.class, () -> s.sge(2, null, 0, 1));
            assertThrows(IllegalArgumentException.class, () -> s.numSge(3));
            assertThrows(IllegalArgumentException.class, () -> s.opcode(42));
            assertThrows(IllegalArgumentException.class, () -> s.atomic(3, 1, 0, 0));
            assertThrows(IndexOutOfBoundsException.class, () -> s.rdma(new RemoteRegion(4096, 100, 1), 101));
            try (Arena a = Arena.ofConfined()) {
                MemorySegment data = a.allocate(16);
                assertThrows(IndexOutOfBoundsException.class, () -> s.inlineSge(0, data, 8, 9));
                assertThrows(
                        IllegalArgumentException.class,
                        () -> s.inlineSge(0, MemorySegment.ofArray(new byte[16]), 0, 4));
            }
            assertThrows(IndexOutOfBoundsException.class, () -> r.sge(1, null, 0, 1));
        }
        assertThrows(IllegalArgumentException.class, () -> new SendWr(0));
        assertThrows(IllegalArgumentException.class, () -> new WorkCompletions(0));
        try (WorkCompletions w = new WorkCompletions(2)) {
            assertThrows(IndexOutOfBoundsException.class, () -> w.status(0)); // nothing polled yet
        }
        assertThrows(IllegalArgumentException.class, () -> new QpAttr().pathMtu(6));
        assertThrows(IllegalArgumentException.class, () -> new QpAttr().rqPsn(1 << 24));
        assertThrows(IllegalArgumentException.class, () -> new QpAttr().retryCnt(8));
        assertThrows(IllegalArgumentException.class, () -> new AhAttr().global(new byte[4], 0, 64, 0, 0));
        assertThrows(IllegalArgumentException.class, () -> new QpInitAttr().type(8));
    }

    @Test
    void completionErrorsNameTheStatus() {
        VerbsException e =
                VerbsException.ofCompletion(7, VerbsH.IBV_WC_REM_ACCESS_ERR, VerbsH.IBV_WC_RDMA_WRITE, 0, 17);
        assertTrue(
                e.getMessage().contains("IBV_WC_REM_ACCESS_ERR")
                        && e.getMessage().contains("wr_id=7"),
                e.getMessage());
        assertTrue(VerbsException.wcStatusName(99).equals("IBV_WC_STATUS_99"));
        VerbsException m = new VerbsException("ibv_reg_mr_iova2", "len=1048576", 12);
        assertTrue(
                m.getMessage().startsWith("ibv_reg_mr_iova2(len=1048576) failed: error 12 (Cannot allocate memory)")
                        && m.getMessage().contains("ulimit -l"),
                m.getMessage());
    }
}
