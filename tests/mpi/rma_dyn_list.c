/* A linked list spread over the ranks of a dynamic window, rooted at rank 0. Every element is
 * memory its owner attaches just before linking it in, so other ranks meet regions they have
 * not seen yet and must fetch the owner's table of regions again, while the owner is busy in
 * one-sided calls of its own (never in a receive or a probe).
 *
 * List A: every rank links its elements in at once under MPI_Win_lock_all, by
 *   compare-and-swap of the tail's next word (owner rank and address packed in 64 bits) from
 *   0 to the new element; a failed swap returns the element now there, to follow.
 * List B: the ranks link in turn (an element of rank r follows one of rank r - 1), each
 *   access under an exclusive lock of the element's rank: the next pointer is two words
 *   (rank + 1, address) written with MPI_Accumulate(MPI_REPLACE) and read with
 *   MPI_Get_accumulate(MPI_NO_OP), so a reader must never see one word without the other.
 *   A rank waiting for its turn locks and unlocks the tail's rank in a loop, rank 0 its own
 *   window as well.
 * Rank 0 then walks both lists and checks that each holds every rank's elements exactly once. */
#include <stddef.h>

#include "common.h"

enum { KA = 40, KB = 25 };

typedef struct {
    int64_t owner, seq;
    int64_t next;    /* list A: ((rank + 1) << 48) | address; 0 at the tail */
    int64_t pair[2]; /* list B: rank + 1, address; {0, 0} at the tail */
} elem_t;

typedef struct {
    int rank;
    MPI_Aint addr;
} ptr_t;

static elem_t *mine[KA + KB + 2];
static int n_mine;

static elem_t *new_elem(MPI_Win win, int64_t seq, int use_alloc_mem)
{
    elem_t *e;
    if (use_alloc_mem)
        MPI_OK(MPI_Alloc_mem(sizeof *e, MPI_INFO_NULL, &e));
    else
        e = malloc(sizeof *e);
    CHECK(e != NULL, "no memory for an element");
    memset(e, 0, sizeof *e);
    e->owner = t_rank;
    e->seq = seq;
    MPI_OK(MPI_Win_attach(win, e, sizeof *e));
    mine[n_mine++] = e;
    return e;
}

static MPI_Aint addr_of(const void *p)
{
    MPI_Aint a;
    MPI_OK(MPI_Get_address(p, &a));
    return a;
}

static int64_t pack(int rank, MPI_Aint addr)
{
    CHECK((uint64_t)addr < ((uint64_t)1 << 48), "address %p does not fit in 48 bits", (void *)addr);
    return (int64_t)(((uint64_t)(rank + 1) << 48) | (uint64_t)addr);
}

static ptr_t unpack(int64_t w)
{
    ptr_t p = {(int)((uint64_t)w >> 48) - 1, (MPI_Aint)((uint64_t)w & (((uint64_t)1 << 48) - 1))};
    CHECK(p.rank >= 0 && p.rank < t_size && p.addr != 0, "bad next word %llx", (unsigned long long)w);
    return p;
}

static void append_concurrently(MPI_Win win, ptr_t head)
{
    ptr_t tail = head;
    const int64_t zero = 0;
    MPI_OK(MPI_Win_lock_all(0, win));
    for (int k = 0; k < KA; k++) {
        elem_t *e = new_elem(win, k, k % 2);
        const int64_t me = pack(t_rank, addr_of(e));
        for (;;) {
            int64_t seen = -1;
            MPI_OK(MPI_Compare_and_swap(&me, &zero, &seen, MPI_INT64_T, tail.rank,
                                        tail.addr + (MPI_Aint)offsetof(elem_t, next), win));
            MPI_OK(MPI_Win_flush(tail.rank, win));
            if (seen == 0) {
                tail = (ptr_t){t_rank, addr_of(e)};
                break;
            }
            tail = unpack(seen);
        }
    }
    MPI_OK(MPI_Win_unlock_all(win));
}

static void append_in_turn(MPI_Win win, ptr_t head)
{
    const int left = (t_rank + t_size - 1) % t_size;
    ptr_t tail = head;
    for (int k = 0; k < KB;) {
        MPI_OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, tail.rank, 0, win));
        const MPI_Aint at = tail.addr + (MPI_Aint)offsetof(elem_t, pair);
        if (tail.rank == left) { /* the head is rank 0's: rank 1 goes first */
            elem_t *e = new_elem(win, KA + k, k % 2 == 0);
            const int64_t link[2] = {t_rank + 1, (int64_t)addr_of(e)};
            MPI_OK(MPI_Accumulate(link, 2, MPI_INT64_T, tail.rank, at, 2, MPI_INT64_T, MPI_REPLACE, win));
            MPI_OK(MPI_Win_unlock(tail.rank, win));
            tail = (ptr_t){t_rank, addr_of(e)};
            k++;
            continue;
        }
        int64_t link[2] = {-1, -1};
        MPI_OK(MPI_Get_accumulate(NULL, 0, MPI_DATATYPE_NULL, link, 2, MPI_INT64_T, tail.rank, at, 2,
                                  MPI_INT64_T, MPI_NO_OP, win));
        MPI_OK(MPI_Win_unlock(tail.rank, win));
        if (link[0] == 0) {
            CHECK(link[1] == 0, "a next pointer read half written: rank 0, address %llx", (unsigned long long)link[1]);
            continue;
        }
        CHECK(link[0] >= 1 && link[0] <= t_size && link[1] != 0, "a next pointer read half written: %lld, %llx",
              (long long)link[0], (unsigned long long)link[1]);
        tail = (ptr_t){(int)link[0] - 1, (MPI_Aint)link[1]};
    }
}

/* Rank 0: each rank's elements seq first .. first + count - 1 exactly once, in list order
 * per rank (every rank links its own elements in the order it made them). */
static void walk(MPI_Win win, ptr_t head, int pair, int first, int count)
{
    int *next_seq = calloc((size_t)t_size, sizeof(int));
    int total = 0;
    ptr_t at = head;
    MPI_OK(MPI_Win_lock_all(0, win));
    for (;;) {
        elem_t e;
        MPI_OK(MPI_Get(&e, sizeof e, MPI_BYTE, at.rank, at.addr, sizeof e, MPI_BYTE, win));
        MPI_OK(MPI_Win_flush(at.rank, win));
        if (!(at.rank == head.rank && at.addr == head.addr)) {
            CHECK(e.owner == at.rank, "an element at rank %d says its owner is %lld", at.rank, (long long)e.owner);
            CHECK(e.seq == first + next_seq[at.rank], "rank %d's element %lld where %d was due", at.rank,
                  (long long)e.seq, first + next_seq[at.rank]);
            next_seq[at.rank]++;
            total++;
            CHECK(total <= count * t_size, "the list is longer than %d elements", count * t_size);
        }
        if (pair) {
            if (e.pair[0] == 0) break;
            at = (ptr_t){(int)e.pair[0] - 1, (MPI_Aint)e.pair[1]};
        } else {
            if (e.next == 0) break;
            at = unpack(e.next);
        }
    }
    MPI_OK(MPI_Win_unlock_all(win));
    for (int r = 0; r < t_size; r++)
        CHECK_EQ_INT(next_seq[r], count, pair ? "elements of a rank in list B" : "elements of a rank in list A");
    free(next_seq);
}

int main(int argc, char **argv)
{
    t_init(&argc, &argv, "rma_dyn_list");
    MPI_Win win;
    MPI_OK(MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &win));
    MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN);

    /* Rank 0 holds both heads (sentinels, owner -1). */
    elem_t heads[2];
    memset(heads, 0, sizeof heads);
    heads[0].owner = heads[1].owner = -1;
    MPI_Aint head_addr[2] = {0, 0};
    if (t_rank == 0) {
        MPI_OK(MPI_Win_attach(win, heads, sizeof heads));
        head_addr[0] = addr_of(&heads[0]);
        head_addr[1] = addr_of(&heads[1]);
    }
    MPI_OK(MPI_Bcast(head_addr, 2, MPI_AINT, 0, MPI_COMM_WORLD));
    const ptr_t head_a = {0, head_addr[0]}, head_b = {0, head_addr[1]};

    append_concurrently(win, head_a);
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    if (t_rank == 0) walk(win, head_a, 0, 0, KA);
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));

    append_in_turn(win, head_b);
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
    if (t_rank == 0) walk(win, head_b, 1, KA, KB);
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));

    for (int i = 0; i < n_mine; i++) {
        MPI_OK(MPI_Win_detach(win, mine[i]));
        if (mine[i]->seq < KA ? mine[i]->seq % 2 : (mine[i]->seq - KA) % 2 == 0)
            MPI_OK(MPI_Free_mem(mine[i]));
        else
            free(mine[i]);
    }
    if (t_rank == 0) MPI_OK(MPI_Win_detach(win, heads));
    MPI_OK(MPI_Win_free(&win));
    if (t_rank == 0) printf("rma_dyn_list: %d ranks, lists of %d and %d elements: OK\n", t_size, KA * t_size, KB * t_size);
    MPI_Finalize();
    return 0;
}
