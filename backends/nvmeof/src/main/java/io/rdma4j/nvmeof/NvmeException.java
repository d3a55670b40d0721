package io.rdma4j.nvmeof;

import io.rdma4j.Rdma4jException;

/** Root of the NVMe over Fabrics failures: a status from the controller, a protocol violation, a lost connection. */
public class NvmeException extends Rdma4jException {
    public NvmeException(String message) {
        super(message);
    }

    public NvmeException(String message, Throwable cause) {
        super(message, cause);
    }
}
