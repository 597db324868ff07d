// Shape, stride and size queries on tensors.
#include "ggml-impl.h"

extern "C" int64_t lm_ggml_nelements(const struct lm_ggml_tensor * t) {
    if (!t) {
        lm_ggml_null_arg("lm_ggml_nelements");
        return 0;
    }
    return t->ne[0] * t->ne[1] * t->ne[2] * t->ne[3];
}

extern "C" int64_t lm_ggml_nrows(const struct lm_ggml_tensor * t) {
    if (!t) {
        lm_ggml_null_arg("lm_ggml_nrows");
        return 0;
    }
    return t->ne[1] * t->ne[2] * t->ne[3];
}

// Bytes spanned from the first to one past the last element, honouring strides.
extern "C" size_t lm_ggml_nbytes(const struct lm_ggml_tensor * t) {
    if (!t) {
        lm_ggml_null_arg("lm_ggml_nbytes");
        return 0;
    }
    for (int i = 0; i < LM_GGML_MAX_DIMS; i++) {
        if (t->ne[i] <= 0) return 0;
    }
    const int64_t blck = lm_ggml_blck_size(t->type);
    if (blck == 0) return 0;
    size_t nbytes;
    if (blck == 1) {
        nbytes = lm_ggml_type_size(t->type);
        for (int i = 0; i < LM_GGML_MAX_DIMS; i++) nbytes += (size_t) (t->ne[i] - 1) * t->nb[i];
    } else {
        nbytes = (size_t) t->ne[0] * t->nb[0] / (size_t) blck;
        for (int i = 1; i < LM_GGML_MAX_DIMS; i++) nbytes += (size_t) (t->ne[i] - 1) * t->nb[i];
    }
    return nbytes;
}

extern "C" size_t lm_ggml_nbytes_pad(const struct lm_ggml_tensor * t) {
    if (!t) {
        lm_ggml_null_arg("lm_ggml_nbytes_pad");
        return 0;
    }
    return LM_GGML_PAD(lm_ggml_nbytes(t), LM_GGML_MEM_ALIGN);
}

extern "C" size_t lm_ggml_element_size(const struct lm_ggml_tensor * t) {
    if (!t) {
        lm_ggml_null_arg("lm_ggml_element_size");
        return 0;
    }
    return lm_ggml_type_size(t->type);
}

extern "C" bool lm_ggml_is_transposed(const struct lm_ggml_tensor * t) {
    if (!t) {
        lm_ggml_null_arg("lm_ggml_is_transposed");
        return false;
    }
    return t->nb[0] > t->nb[1];
}

extern "C" bool lm_ggml_is_permuted(const struct lm_ggml_tensor * t) {
    if (!t) {
        lm_ggml_null_arg("lm_ggml_is_permuted");
        return false;
    }
    return t->nb[0] > t->nb[1] || t->nb[1] > t->nb[2] || t->nb[2] > t->nb[3];
}

extern "C" bool lm_ggml_is_empty(const struct lm_ggml_tensor * t) {
    if (!t) {
        lm_ggml_null_arg("lm_ggml_is_empty");
        return false;
    }
    return lm_ggml_is_empty_ne(t->ne);
}

extern "C" bool lm_ggml_is_scalar(const struct lm_ggml_tensor * t) {
    if (!t) {
        lm_ggml_null_arg("lm_ggml_is_scalar");
        return false;
    }
    return t->ne[0] == 1 && t->ne[1] == 1 && t->ne[2] == 1 && t->ne[3] == 1;
}
extern "C" bool lm_ggml_is_vector(const struct lm_ggml_tensor * t) {
    if (!t) {
        lm_ggml_null_arg("lm_ggml_is_vector");
        return false;
    }
    return t->ne[1] == 1 && t->ne[2] == 1 && t->ne[3] == 1;
}
extern "C" bool lm_ggml_is_matrix(const struct lm_ggml_tensor * t) {
    if (!t) {
        lm_ggml_null_arg("lm_ggml_is_matrix");
        return false;
    }
    return t->ne[2] == 1 && t->ne[3] == 1;
}
extern "C" bool lm_ggml_is_3d(const struct lm_ggml_tensor * t) {
    if (!t) {
        lm_ggml_null_arg("lm_ggml_is_3d");
        return false;
    }
    return t->ne[3] == 1;
}

extern "C" int lm_ggml_n_dims(const struct lm_ggml_tensor * t) {
    if (!t) {
        lm_ggml_null_arg("lm_ggml_n_dims");
        return 0;
    }
    for (int i = LM_GGML_MAX_DIMS - 1; i >= 1; --i) {
        if (t->ne[i] > 1) return i + 1;
    }
    return 1;
}

// Contiguous in dims >= n: rows of dims < n may be strided, the rest packed.
static bool is_contiguous_n(const struct lm_ggml_tensor * t, int n) {
    size_t next_nb = lm_ggml_type_size(t->type);
    if (t->ne[0] != lm_ggml_blck_size(t->type) && t->nb[0] != next_nb) return false;
    next_nb *= (size_t) (t->ne[0] / lm_ggml_blck_size(t->type));
    for (int i = 1; i < LM_GGML_MAX_DIMS; i++) {
        if (t->ne[i] != 1) {
            if (i > n) {
                if (t->nb[i] != next_nb) return false;
                next_nb *= (size_t) t->ne[i];
            } else {
                // this dimension does not need to be contiguous
                next_nb = (size_t) t->ne[i] * t->nb[i];
            }
        }
    }
    return true;
}

extern "C" bool lm_ggml_is_contiguous(const struct lm_ggml_tensor * t) {
    if (!t) {
        lm_ggml_null_arg("lm_ggml_is_contiguous");
        return false;
    }
    return is_contiguous_n(t, 0);
}
extern "C" bool lm_ggml_is_contiguous_0(const struct lm_ggml_tensor * t) {
    if (!t) {
        lm_ggml_null_arg("lm_ggml_is_contiguous_0");
        return false;
    }
    return is_contiguous_n(t, 0);
}
extern "C" bool lm_ggml_is_contiguous_1(const struct lm_ggml_tensor * t) {
    if (!t) {
        lm_ggml_null_arg("lm_ggml_is_contiguous_1");
        return false;
    }
    return is_contiguous_n(t, 1);
}
extern "C" bool lm_ggml_is_contiguous_2(const struct lm_ggml_tensor * t) {
    if (!t) {
        lm_ggml_null_arg("lm_ggml_is_contiguous_2");
        return false;
    }
    return is_contiguous_n(t, 2);
}

extern "C" bool lm_ggml_are_same_shape(const struct lm_ggml_tensor * a, const struct lm_ggml_tensor * b) {
    if (!a || !b) {
        lm_ggml_null_arg("lm_ggml_are_same_shape");
        return false;
    }
    return a->ne[0] == b->ne[0] && a->ne[1] == b->ne[1] && a->ne[2] == b->ne[2] && a->ne[3] == b->ne[3];
}

extern "C" bool lm_ggml_are_same_stride(const struct lm_ggml_tensor * a, const struct lm_ggml_tensor * b) {
    if (!a || !b) {
        lm_ggml_null_arg("lm_ggml_are_same_stride");
        return false;
    }
    return a->nb[0] == b->nb[0] && a->nb[1] == b->nb[1] && a->nb[2] == b->nb[2] && a->nb[3] == b->nb[3];
}

// t0 can be broadcast (tiled) to t1's shape
extern "C" bool lm_ggml_can_repeat(const struct lm_ggml_tensor * t0, const struct lm_ggml_tensor * t1) {
    if (!t0 || !t1) {
        lm_ggml_null_arg("lm_ggml_can_repeat");
        return false;
    }
    if (lm_ggml_is_empty(t0)) return lm_ggml_is_empty(t1);
    for (int i = 0; i < LM_GGML_MAX_DIMS; i++) {
        if (t1->ne[i] % t0->ne[i] != 0) return false;
    }
    return true;
}
