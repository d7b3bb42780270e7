# Lock-free row-parallel epochs (Recht, Re, Wright & Niu 2011, "Hogwild!")
# shared by the U-max, Implicit SGD and sampled-softmax kernels.
#
# An epoch's rows (in the shuffled order) are cut into chunks of
# HOGWILD_CHUNK rows; the threads take chunks dynamically and run the
# serial per-row step on each, reading and writing W without locks: a
# sparse row touches few entries of W, so two threads rarely write the same
# entry, and Hogwild's analysis bounds the effect of the collisions that do
# happen. What is not sparse is kept off the threads:
#
# - W's lazy global scale (the L2 shrinkage), ||W||^2 and App. B's
#   projection, the iterate average and the error checks are per-epoch
#   bookkeeping that every row would write: each chunk sums its part
#   privately and the epoch merges the sums between *rounds* of
#   HOGWILD_ROUND_CHUNKS chunks per thread, with the threads joined. A
#   row's shrinkage is thus applied at the end of its round (the rows of a
#   round step from the round's starting scale), and the rows of a round
#   enter the average with the round's final iterate, as a minibatch's
#   rows do;
# - every chunk draws its classes from its own random stream, seeded from
#   one number drawn from the estimator's generator per epoch and the
#   chunk's index, so the draws do not depend on which thread runs the
#   chunk (the result still does, through the timing of the writes: a
#   threaded fit is reproducible in distribution only).
# The per-chunk streams are ``chunk_stream`` of _random.pxd.

cdef enum:
    HOGWILD_CHUNK = 64
    HOGWILD_ROUND_CHUNKS = 16
