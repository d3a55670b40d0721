package io.rdma4j.engine.internal;

import io.rdma4j.InvalidArgumentException;
import java.nio.ByteBuffer;
import java.util.HexFormat;
import java.util.regex.Pattern;

/** The names an engine puts in the directory: its own, its buffers', its inboxes'. */
final class Names {
    /**
     * Engine and buffer names: the directory takes {@code [A-Za-z0-9][A-Za-z0-9._:@/-]{0,127}}, and a published buffer
     * goes there as {@code engine/buffer}, so each part is at most 63 characters and has no {@code /}.
     */
    static final String RULE = "[A-Za-z0-9][A-Za-z0-9._:@-]{0,62}";

    private static final Pattern NAME = Pattern.compile(RULE);

    private Names() {}

    static boolean valid(String name) {
        return name != null && NAME.matcher(name).matches();
    }

    /** Throws unless {@code name} follows {@link #RULE}; {@code what} is "engine" or "buffer". */
    static void check(String what, String name) {
        if (!valid(name)) {
            throw new InvalidArgumentException(what + " name '" + name + "' must match " + RULE);
        }
    }

    /** {@return the directory's name of {@code owner}'s buffer {@code buffer}} */
    static String wire(String owner, String buffer) {
        return owner + "/" + buffer;
    }

    /** {@return the name under which a responder describes the inbox it gave {@code initiator}} */
    static String inbox(String initiator) {
        String n = "inbox/" + initiator;
        return n.length() <= 128
                ? n
                : "inbox/"
                        + HexFormat.of()
                                .formatHex(ByteBuffer.allocate(8)
                                        .putLong(initiator.hashCode())
                                        .array());
    }
}
