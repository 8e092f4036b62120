"""One walk over a function body that records what the analysis needs: loops (canonical
or not), array accesses, scalar references, calls, jumps, declarations and the update
statements that may be reductions. Every record carries its byte range and the stack of
loops around it, so a loop's contents are the records inside its span."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import clang.cindex as ci

from cudaify.frontend import stdlib_model
from cudaify.frontend.loops import (
    CK,
    Header,
    Source,
    binary_operator,
    canonical_header,
    end_of,
    for_parts,
    identity,
    index_tree,
    kids,
    start_of,
    unary_operator,
    unwrap,
)

TK = ci.TypeKind
ARRAY_TYPES = {TK.CONSTANTARRAY, TK.INCOMPLETEARRAY, TK.VARIABLEARRAY, TK.DEPENDENTSIZEDARRAY}
REDUCTION_ASSIGN = {"+=": "+", "-=": "+", "*=": "*", "&=": "&", "|=": "|", "^=": "^"}
REDUCTION_BINARY = {"+": "+", "*": "*", "&": "&", "|": "|", "^": "^", "&&": "&&", "||": "||"}
MINMAX_CALLS = {
    "fmin": "min",
    "fminf": "min",
    "fminl": "min",
    "min": "min",
    "fmax": "max",
    "fmaxf": "max",
    "fmaxl": "max",
    "max": "max",
}


@dataclass(eq=False)
class LoopNode:
    cursor: ci.Cursor
    kind: str  # for | while | do
    header: Header | None
    start: int
    end: int
    body_start: int
    body_end: int
    line: int
    column: int
    parent: LoopNode | None = None
    canonical: bool = False
    children: list[LoopNode] = field(default_factory=list)

    def contains(self, offset: int) -> bool:
        return self.start <= offset < self.end

    def in_body(self, offset: int) -> bool:
        return self.body_start <= offset < self.body_end


@dataclass(eq=False)
class RawAccess:
    array: str  # C spelling of the array: `x`, `A`, `p->x`, `v`
    root_decl: int  # declaration of the variable the array hangs off (0: unknown)
    kind: str  # pointer | param_array | global_array | local_array | vector | field | unknown
    elem_type: str
    indices: tuple[ci.Cursor | None, ...]  # outermost first; None: unreadable
    dim_sizes: tuple[int | None, ...]  # declared sizes of every dimension (None: unknown)
    dim_texts: tuple[str, ...]  # spelled sizes of the inner dimensions
    mode: str  # read | write | readwrite | addr
    start: int
    end: int
    text: str
    stack: tuple[LoopNode, ...]

    @property
    def is_write(self) -> bool:
        return self.mode in ("write", "readwrite", "addr")

    @property
    def is_read(self) -> bool:
        return self.mode in ("read", "readwrite", "addr")


@dataclass(eq=False)
class Ref:
    """A reference to a scalar variable or scalar field (`s.f`, `p->n`)."""

    name: str
    decl: int
    start: int
    mode: str
    stack: tuple[LoopNode, ...]
    is_pointer: bool
    is_global: bool
    type: str


@dataclass(eq=False)
class Call:
    name: str
    start: int
    end: int
    line: int
    arguments: tuple[str, ...]
    pointer_arguments: tuple[str, ...]
    stack: tuple[LoopNode, ...]
    cursor: ci.Cursor
    is_method: bool = False
    callee_text: str = ""  # the callee as written (`f<R>` in a template), "" when implicit
    # "pure": a modelled library operation (stdlib_model); "lambda": the call of a local
    # lambda, whose body's unmodelled calls are `inner` and whose effects were folded in
    # here, or `why` it cannot be when its body writes or reaches unknown memory
    model: str = ""
    inner: tuple[str, ...] = ()
    why: str = ""
    user: bool = False  # the callee is declared in the program, not in a system header
    in_std: bool = False  # the callee is declared in namespace std


@dataclass(eq=False)
class Jump:
    kind: str  # break | continue | return | goto
    start: int
    target: object | None  # the loop or switch cursor a break leaves


@dataclass(eq=False)
class Decl:
    name: str
    decl: int
    start: int
    is_static: bool
    cursor: ci.Cursor


@dataclass(eq=False)
class Update:
    """`t op= e`, `t = t op e`, `t++`, min/max forms and plain `t = e` (op "=")."""

    target: str  # normalized text of the target
    op: str | None
    start: int
    end: int
    self_free: bool  # e does not mention the target
    target_is_array: bool
    cursor: ci.Cursor | None = None
    # op "payload": a value kept with the min/max `key` (`if (v < m) { m = v; k = i; }`);
    # `strict`: the comparison is < or > (the first of equal values wins, else the last)
    key: str = ""
    strict: bool = True


@dataclass
class Walk:
    loops: list[LoopNode] = field(default_factory=list)  # every loop, source order
    accesses: list[RawAccess] = field(default_factory=list)
    refs: list[Ref] = field(default_factory=list)
    calls: list[Call] = field(default_factory=list)
    jumps: list[Jump] = field(default_factory=list)
    decls: list[Decl] = field(default_factory=list)
    updates: list[Update] = field(default_factory=list)
    parents: dict[bytes, ci.Cursor] = field(default_factory=dict)  # identity -> parent


def norm(text: str) -> str:
    return re.sub(r"\s+", "", text)


def member_name(src: Source, cursor: ci.Cursor) -> str:
    """A field as the analysis names it: `p->x`, `s.a.b`; `this->x` and `x` are one."""
    return norm(src.text(cursor)).removeprefix("this->")


def mentions(haystack: str, needle: str) -> bool:
    return re.search(r"(?<![\w.>])" + re.escape(needle) + r"(?!\w)", haystack) is not None


class Walker:
    def __init__(self, src: Source):
        self.src = src
        self.out = Walk()
        self.stack: list[LoopNode] = []
        self.breakables: list[object] = []
        self.decls: dict[int, tuple[str, int, bool, bool, str] | None] = {}
        self.lambda_depth = 0  # inside a lambda's body, `return` leaves the lambda only

    # statements -------------------------------------------------------------------
    def statement(self, cursor: ci.Cursor) -> None:
        kind = cursor.kind
        if kind in (CK.FOR_STMT, CK.WHILE_STMT, CK.DO_STMT):
            self.loop(cursor)
        elif kind == CK.SWITCH_STMT:
            self.breakables.append(cursor.hash)
            self.children(cursor)
            self.breakables.pop()
        elif self.lambda_depth and kind == CK.RETURN_STMT:
            self.children(cursor)
        elif kind == CK.BREAK_STMT:
            target = self.breakables[-1] if self.breakables else None
            self.out.jumps.append(Jump("break", start_of(cursor), target))
        elif kind == CK.CONTINUE_STMT:
            self.out.jumps.append(Jump("continue", start_of(cursor), None))
        elif kind in (CK.RETURN_STMT, CK.GOTO_STMT, CK.INDIRECT_GOTO_STMT):
            word = "return" if kind == CK.RETURN_STMT else "goto"
            self.out.jumps.append(Jump(word, start_of(cursor), None))
            self.children(cursor)
        elif kind == CK.DECL_STMT:
            for decl in kids(cursor):
                self.declaration(decl)
        elif kind == CK.IF_STMT:
            self.if_assign(cursor)
            self.children(cursor)
        elif kind.is_expression():
            self.expression(cursor, "read")
        else:
            self.children(cursor)

    def children(self, cursor: ci.Cursor) -> None:
        for child in kids(cursor):
            self.out.parents[identity(child)] = cursor
            if child.kind.is_expression():
                self.expression(child, "read")
            else:
                self.statement(child)

    def declaration(self, decl: ci.Cursor) -> None:
        if decl.kind != CK.VAR_DECL:
            return
        is_static = decl.storage_class == ci.StorageClass.STATIC
        self.out.decls.append(Decl(decl.spelling, decl.hash, start_of(decl), is_static, decl))
        for child in kids(decl):
            if child.kind.is_expression():
                self.expression(child, "read")

    def loop(self, cursor: ci.Cursor) -> None:
        header = canonical_header(self.src, cursor) if cursor.kind == CK.FOR_STMT else None
        body = kids(cursor)
        if cursor.kind == CK.FOR_STMT:
            parts = for_parts(self.src, cursor)
            body_cursor = parts.body if parts else (body[-1] if body else cursor)
        elif cursor.kind == CK.WHILE_STMT:
            body_cursor = body[-1] if body else cursor
        else:
            body_cursor = body[0] if body else cursor
        start = start_of(cursor)
        line, column = self.src.line_col(start)
        node = LoopNode(
            cursor=cursor,
            kind={CK.FOR_STMT: "for", CK.WHILE_STMT: "while"}.get(cursor.kind, "do"),
            header=header,
            start=start,
            end=end_of(cursor),
            body_start=start_of(body_cursor),
            body_end=end_of(body_cursor),
            line=line,
            column=column,
            parent=self.stack[-1] if self.stack else None,
        )
        self.out.loops.append(node)
        for child in body:
            self.out.parents[identity(child)] = cursor
            if child.hash == body_cursor.hash:
                continue
            self.statement(child) if not child.kind.is_expression() else self.expression(
                child, "read"
            )
        self.stack.append(node)
        self.breakables.append(cursor.hash)
        self.statement(body_cursor) if not body_cursor.kind.is_expression() else self.expression(
            body_cursor, "read"
        )
        self.breakables.pop()
        self.stack.pop()

    # expressions ------------------------------------------------------------------
    def expression(self, cursor: ci.Cursor, mode: str) -> None:
        kind = cursor.kind
        if kind in (CK.UNEXPOSED_EXPR, CK.PAREN_EXPR, CK.CSTYLE_CAST_EXPR):
            for child in kids(cursor):
                self.expression(child, mode)
        elif kind == CK.BINARY_OPERATOR:
            self.binary(cursor, mode)
        elif kind == CK.COMPOUND_ASSIGNMENT_OPERATOR:
            lhs, rhs = kids(cursor)
            op = binary_operator(self.src, cursor) or ""
            self.record_update(cursor, lhs, REDUCTION_ASSIGN.get(op), rhs)
            self.expression(lhs, "readwrite")
            self.expression(rhs, "read")
        elif kind == CK.UNARY_OPERATOR:
            self.unary(cursor, mode)
        elif kind == CK.ARRAY_SUBSCRIPT_EXPR:
            self.subscript(cursor, mode)
        elif kind == CK.DECL_REF_EXPR:
            self.decl_ref(cursor, mode)
        elif kind == CK.MEMBER_REF_EXPR:
            self.member(cursor, mode)
        elif kind == CK.CALL_EXPR:
            self.call(cursor, mode)
        elif kind == CK.COMPOUND_STMT:
            self.statement(cursor)
        elif kind == CK.LAMBDA_EXPR:
            self.lambda_depth += 1
            self.children(cursor)
            self.lambda_depth -= 1
        else:
            for child in kids(cursor):
                if child.kind.is_expression():
                    self.expression(child, "read")
                else:
                    self.statement(child)

    def binary(self, cursor: ci.Cursor, mode: str) -> None:
        children = kids(cursor)
        op = binary_operator(self.src, cursor)
        if op == "=" and len(children) == 2:
            lhs, rhs = children
            self.record_assignment(cursor, lhs, rhs)
            self.expression(lhs, "write")
            self.expression(rhs, "read")
            return
        for child in children:
            self.expression(child, "read")

    def unary(self, cursor: ci.Cursor, mode: str) -> None:
        op = unary_operator(self.src, cursor)
        children = kids(cursor)
        if op is None or not children:
            for child in children:
                self.expression(child, "read")
            return
        operand = children[0]
        if op[0] in ("++", "--"):
            self.record_update(cursor, operand, "+", None)
            self.expression(operand, "readwrite")
        elif op[0] == "&":
            self.expression(operand, "addr")
        elif op[0] == "*" and op[1]:
            self.dereference(cursor, operand, mode)
        else:
            self.expression(operand, "read")

    def dereference(self, cursor: ci.Cursor, operand: ci.Cursor, mode: str) -> None:
        """`*p` is p[0] and `*(p + e)` is p[e]; anything else is an unknown access."""
        inner = unwrap(operand)
        base, index = inner, None
        if inner.kind == CK.BINARY_OPERATOR and binary_operator(self.src, inner) == "+":
            left, right = kids(inner)
            if unwrap(left).type.get_canonical().kind == TK.POINTER:
                base, index = left, right
        root = unwrap(base)
        if root.kind == CK.DECL_REF_EXPR and root.type.get_canonical().kind == TK.POINTER:
            self.add_access(cursor, root, [index] if index is not None else [0], mode)
            if index is not None:
                self.expression(index, "read")
            return
        self.add_unknown(cursor, mode)
        self.expression(operand, "read")

    def subscript(self, cursor: ci.Cursor, mode: str) -> None:
        indices: list[ci.Cursor] = []
        node = cursor
        while node.kind == CK.ARRAY_SUBSCRIPT_EXPR:
            base, index = kids(node)
            indices.insert(0, index)
            base = unwrap(base)
            row_is_array = base.type.get_canonical().kind in ARRAY_TYPES
            if base.kind == CK.ARRAY_SUBSCRIPT_EXPR and row_is_array:
                node = base
                continue
            node = base
            break
        for index in indices:
            self.expression(index, "read")
        pointee = self.whole_array_of(node)
        if pointee is not None:
            # `(*B)[r][s]` with `double (*B)[N][N]`: B[0][r][s]
            self.add_access(cursor, pointee, [0, *indices], mode)
            return
        if node.kind == CK.ARRAY_SUBSCRIPT_EXPR or node.kind == CK.CALL_EXPR:
            # `a[i][j]` through a pointer-to-pointer or a returned pointer: the row is
            # not a known array, so the access is unknown.
            self.add_unknown(cursor, mode)
            self.expression(node, "read")
            return
        self.add_access(cursor, node, indices, mode)

    def whole_array_of(self, node: ci.Cursor) -> ci.Cursor | None:
        """The pointer `p` when `node` is `*p` and p points to a whole array (`double
        (*p)[N][M]`, how PolyBench allocates): its elements are p[0][i][j]."""
        if node.kind != CK.UNARY_OPERATOR:
            return None
        op = unary_operator(self.src, node)
        children = kids(node)
        if op is None or op[0] != "*" or not op[1] or len(children) != 1:
            return None
        root = unwrap(children[0])
        t = root.type.get_canonical()
        if root.kind != CK.DECL_REF_EXPR or t.kind != TK.POINTER:
            return None
        return root if t.get_pointee().get_canonical().kind in ARRAY_TYPES else None

    def add_access(self, cursor: ci.Cursor, base: ci.Cursor, indices: list, mode: str) -> None:
        info = array_info(self.src, base)
        if info is None:
            self.add_unknown(cursor, mode)
            self.expression(base, "read")
            return
        name, root_decl, kind, sizes, texts = info
        if base.kind == CK.MEMBER_REF_EXPR:
            self.member_base(base)
        if kind != "vector" and len(indices) < len(sizes):
            # `a[i]` of a 2-D array is a whole row (passed on, or its address taken):
            # the elements touched are not known
            indices = list(indices) + [None] * (len(sizes) - len(indices))
        self.out.accesses.append(
            RawAccess(
                array=name,
                root_decl=root_decl,
                kind=kind,
                elem_type=_element_of(cursor, base),
                indices=tuple(indices),
                dim_sizes=sizes,
                dim_texts=texts,
                mode=mode,
                start=start_of(cursor),
                end=end_of(cursor),
                text=self.src.text(cursor),
                stack=tuple(self.stack),
            )
        )

    def add_unknown(self, cursor: ci.Cursor, mode: str) -> None:
        self.out.accesses.append(
            RawAccess(
                array="<unknown>",
                root_decl=0,
                kind="unknown",
                elem_type=element_type(cursor),
                indices=(None,),
                dim_sizes=(None,),
                dim_texts=(),
                mode=mode,
                start=start_of(cursor),
                end=end_of(cursor),
                text=self.src.text(cursor),
                stack=tuple(self.stack),
            )
        )

    def member_base(self, member: ci.Cursor) -> None:
        """Reads of the object a field array hangs off (`p` in `p->x[i]`)."""
        for child in kids(member):
            self.expression(child, "read")

    def decl_ref(self, cursor: ci.Cursor, mode: str) -> None:
        ref = cursor.referenced
        if ref is None:
            return
        info = self.decl_info(ref)
        if info is None:
            return
        name, key, is_pointer, is_global, type_spelling = info
        self.out.refs.append(
            Ref(
                name=name,
                decl=key,
                start=start_of(cursor),
                mode=mode,
                stack=tuple(self.stack),
                is_pointer=is_pointer,
                is_global=is_global,
                type=type_spelling,
            )
        )

    def decl_info(self, ref: ci.Cursor) -> tuple[str, int, bool, bool, str] | None:
        """(name, hash, pointer or array, global or static, type) of a variable, once."""
        key = ref.hash
        if key not in self.decls:
            if ref.kind not in (CK.VAR_DECL, CK.PARM_DECL):
                self.decls[key] = None
            else:
                canonical = ref.type.get_canonical()
                parent = ref.semantic_parent
                self.decls[key] = (
                    ref.spelling,
                    key,
                    canonical.kind in (TK.POINTER, *ARRAY_TYPES),
                    parent is not None
                    and parent.kind == CK.TRANSLATION_UNIT
                    or ref.storage_class == ci.StorageClass.STATIC,
                    ref.type.spelling,
                )
        return self.decls[key]

    def member(self, cursor: ci.Cursor, mode: str) -> None:
        children = kids(cursor)
        base = unwrap(children[0]) if children else None
        if base is not None and base.kind in (CK.ARRAY_SUBSCRIPT_EXPR, CK.CALL_EXPR):
            # `pts[i].x`: an access to element i of pts
            self.expression(base, mode)
            return
        ref = cursor.referenced
        if ref is not None and ref.kind == CK.CXX_METHOD:
            for child in children:
                self.expression(child, "read")
            return
        root = _root_decl(cursor)
        self.out.refs.append(
            Ref(
                name=member_name(self.src, cursor),
                decl=root.hash if root else 0,
                start=start_of(cursor),
                mode=mode,
                stack=tuple(self.stack),
                is_pointer=cursor.type.get_canonical().kind in (TK.POINTER, *ARRAY_TYPES),
                is_global=root is None
                or (
                    root.semantic_parent is not None
                    and root.semantic_parent.kind == CK.TRANSLATION_UNIT
                ),
                type=cursor.type.spelling,
            )
        )
        for child in children:
            if unwrap(child).kind != CK.DECL_REF_EXPR:
                self.expression(child, "read")

    def call(self, cursor: ci.Cursor, mode: str) -> None:
        children = kids(cursor)
        name = cursor.spelling
        if name == "operator[]" and len(children) == 3 and _is_std_container(children[0]):
            self.expression(children[2], "read")
            self.add_access(cursor, unwrap(children[0]), [children[2]], mode)
            return
        callee = unwrap(children[0]) if children else None
        is_method = callee is not None and callee.kind == CK.MEMBER_REF_EXPR
        dependent = _dependent_callee(self.src, cursor, callee) if not name else None
        args = children[1:] if children and (_is_callee(children[0]) or dependent) else children
        if name.startswith("operator") and children:
            args = [c for c in children if not _is_callee(c)]
        qualified = dependent or _qualified(cursor)
        found = stdlib_model.model(cursor) if not dependent else None
        record = Call(
            name=qualified,
            start=start_of(cursor),
            end=end_of(cursor),
            line=cursor.location.line,
            arguments=tuple(self.src.text(a) for a in args),
            pointer_arguments=tuple(self.src.text(a) for a in args if _pointerish(a)),
            stack=tuple(self.stack),
            cursor=cursor,
            is_method=is_method,
            callee_text=self.src.text(children[0]) if dependent else "",
            user=cursor.referenced is not None and self.src.in_main(cursor.referenced),
            in_std=cursor.referenced is not None
            and stdlib_model.qualified_name(cursor.referenced).startswith("std::"),
        )
        self.out.calls.append(record)
        if found is not None:
            self.modelled_call(record, found, callee if is_method else None, args)
            return
        if is_method and callee is not None:
            for child in kids(callee):
                self.expression(child, "read")
        for arg, arg_mode in zip(args, _argument_modes(cursor, len(args)), strict=True):
            self.expression(arg, arg_mode)

    def modelled_call(
        self,
        record: Call,
        found: stdlib_model.CallModel,
        member: ci.Cursor | None,
        args: list[ci.Cursor],
    ) -> None:
        """A call the standard-library model knows: its object is used as the model says
        (`a += b`, `p = q`, `v.size()`), its arguments are read (or written through a
        non-const reference parameter of a lambda)."""
        cursor = record.cursor
        objects: list[ci.Cursor] = []
        if member is not None:
            objects = list(kids(member))
        elif cursor.referenced is not None and cursor.referenced.kind == CK.CXX_METHOD and args:
            objects, args = [args[0]], args[1:]  # `a += b`: a is the object
        for obj in objects:
            self.expression(obj, found.object_mode or "read")
        for arg, arg_mode in zip(args, _argument_modes(cursor, len(args)), strict=True):
            self.expression(arg, arg_mode)
        if found.kind == "pure":
            record.model = "pure"
            return
        record.model = "lambda"
        assert found.lambda_expr is not None
        self.fold_lambda(record, found.lambda_expr, found.lambda_name)

    def fold_lambda(self, record: Call, expression: ci.Cursor, name: str) -> None:
        """The effects of a lambda's body, seen at the call: reads of captured arrays (any
        element) and scalars; a write to anything but its own locals is refused."""
        body = stdlib_model.lambda_body(expression)
        if body is None:
            record.why = f"the body of lambda '{name}' is not visible"
            return
        inner = Walker(self.src)
        inner.lambda_depth = 1
        inner.statement(body)
        params = {p.hash: p for p in stdlib_model.lambda_parameters(expression)}
        local = set(params) | {d.decl for d in inner.out.decls if not d.is_static}
        record.why = _lambda_effects(inner.out, local, name)
        if record.why:
            return
        calls = [c for c in inner.out.calls if c.model != "pure"]
        record.why = next((c.why for c in calls if c.why), "")
        record.inner = tuple(
            n for c in calls for n in ((c.name,) if c.model != "lambda" else c.inner)
        )
        where = (record.start, record.end, tuple(self.stack))
        for access in inner.out.accesses:
            if access.root_decl not in local:
                self.out.accesses.append(_moved_read(access, where))
        for ref in inner.out.refs:
            if ref.decl not in local:
                self.out.refs.append(
                    Ref(ref.name, ref.decl, where[0], "read", where[2], ref.is_pointer,
                        ref.is_global, ref.type)
                )  # fmt: skip

    # update statements ---------------------------------------------------------------
    def record_update(
        self, cursor: ci.Cursor, target: ci.Cursor, op: str | None, rhs: ci.Cursor | None
    ) -> None:
        target_text = norm(self.src.text(target))
        rhs_text = norm(self.src.text(rhs)) if rhs is not None else ""
        self.out.updates.append(
            Update(
                target=target_text,
                op=op,
                start=start_of(cursor),
                end=end_of(cursor),
                self_free=not mentions(rhs_text, target_text),
                target_is_array=unwrap(target).kind in (CK.ARRAY_SUBSCRIPT_EXPR, CK.CALL_EXPR),
                cursor=cursor,
            )
        )

    def record_assignment(self, cursor: ci.Cursor, lhs: ci.Cursor, rhs: ci.Cursor) -> None:
        target = norm(self.src.text(lhs))
        found = self.reduction_form(target, unwrap(rhs))
        if found is None:
            self.record_update(cursor, lhs, "=", rhs)
            return
        op, other = found
        self.out.updates.append(
            Update(
                target=target,
                op=op,
                start=start_of(cursor),
                end=end_of(cursor),
                self_free=not mentions(other, target),
                target_is_array=unwrap(lhs).kind in (CK.ARRAY_SUBSCRIPT_EXPR, CK.CALL_EXPR),
                cursor=cursor,
            )
        )

    def reduction_form(self, target: str, rhs: ci.Cursor) -> tuple[str, str] | None:
        """(op, text of the other operand) when rhs combines the target with something."""
        children = kids(rhs)
        if rhs.kind == CK.BINARY_OPERATOR and len(children) == 2:
            op = binary_operator(self.src, rhs) or ""
            left, right = (norm(self.src.text(c)) for c in children)
            if op == "-" and _same(left, target):
                return "+", right
            if op in REDUCTION_BINARY and _same(left, target):
                return REDUCTION_BINARY[op], right
            if op in REDUCTION_BINARY and _same(right, target):
                return REDUCTION_BINARY[op], left
            return None
        if rhs.kind == CK.CALL_EXPR:
            short = rhs.spelling.split("::")[-1]
            args = [norm(self.src.text(c)) for c in children if not _is_callee(c)]
            if short in MINMAX_CALLS and len(args) == 2:
                if _same(args[0], target):
                    return MINMAX_CALLS[short], args[1]
                if _same(args[1], target):
                    return MINMAX_CALLS[short], args[0]
            return None
        if rhs.kind == CK.CONDITIONAL_OPERATOR and len(children) == 3:
            return self.conditional_minmax(target, *children)
        return None

    def conditional_minmax(
        self, target: str, cond: ci.Cursor, yes: ci.Cursor, no: ci.Cursor
    ) -> tuple[str, str] | None:
        cond = unwrap(cond)
        op = binary_operator(self.src, cond) if cond.kind == CK.BINARY_OPERATOR else None
        if op not in ("<", "<=", ">", ">="):
            return None
        left, right = (norm(self.src.text(c)) for c in kids(cond))
        yes_text, no_text = norm(self.src.text(yes)), norm(self.src.text(no))
        if {_strip(left), _strip(right)} != {_strip(yes_text), _strip(no_text)}:
            return None
        if target not in (_strip(left), _strip(right)):
            return None
        picks_left = _strip(yes_text) == _strip(left)
        smaller = op in ("<", "<=")
        kind = "min" if picks_left == smaller else "max"
        other = _strip(right) if _strip(left) == target else _strip(left)
        return kind, other

    def if_assign(self, cursor: ci.Cursor) -> None:
        """`if (e > m) m = e;` is a max reduction (and the mirrored forms). With more
        assignments in the braces, `if (e < m) { m = e; k = i; }` (argmin, argmax), each
        other target is a payload of the key `m`: a plain scalar whose value depends on
        the iteration alone (it mentions neither `m` nor another payload)."""
        children = kids(cursor)
        if len(children) != 2:
            return
        cond, then = unwrap(children[0]), children[1]
        statements = kids(then) if then.kind == CK.COMPOUND_STMT else [then]
        assignments = [unwrap(c) for c in statements]
        if not assignments or any(
            a.kind != CK.BINARY_OPERATOR or binary_operator(self.src, a) != "=" for a in assignments
        ):
            return
        if cond.kind != CK.BINARY_OPERATOR:
            return
        op = binary_operator(self.src, cond)
        if op not in ("<", "<=", ">", ">="):
            return
        left, right = (_strip(norm(self.src.text(c))) for c in kids(cond))
        sides = [(lhs, rhs) for lhs, rhs in (kids(a) for a in assignments)]
        texts = [(norm(self.src.text(lhs)), _strip(norm(self.src.text(rhs)))) for lhs, rhs in sides]
        keys = [
            k
            for k, (target, value) in enumerate(texts)
            if {left, right} == {target, value} and not mentions(value, target)
        ]
        if len(keys) != 1:
            return
        key = keys[0]
        target, value = texts[key]
        # m = e when e > m (i.e. left is e for > / >=) keeps the maximum
        value_is_left = left == value
        greater = op in (">", ">=")
        kind = "max" if value_is_left == greater else "min"
        payloads = [k for k in range(len(texts)) if k != key]
        if payloads and not self._payloads_apart(texts, key, payloads, sides):
            return
        self.out.updates.append(
            Update(
                target=target,
                op=kind,
                start=start_of(cursor),
                end=end_of(cursor),
                self_free=True,
                target_is_array=unwrap(sides[key][0]).kind == CK.ARRAY_SUBSCRIPT_EXPR,
            )
        )
        for k in payloads:
            self.out.updates.append(
                Update(
                    target=texts[k][0],
                    op="payload",
                    start=start_of(assignments[k]),
                    end=end_of(assignments[k]),
                    self_free=True,
                    target_is_array=False,
                    key=target,
                    strict=op in ("<", ">"),
                )
            )

    def _payloads_apart(
        self,
        texts: list[tuple[str, str]],
        key: int,
        payloads: list[int],
        sides: list[tuple[ci.Cursor, ci.Cursor]],
    ) -> bool:
        """Each payload a distinct plain name, its value free of the key and of every
        payload (so it depends on the iteration alone), the key a plain name too."""
        key_name = texts[key][0]
        if not _PLAIN_NAME.fullmatch(key_name):
            return False
        if any(
            unwrap(sides[k][0]).kind != CK.DECL_REF_EXPR or not _PLAIN_NAME.fullmatch(texts[k][0])
            for k in payloads
        ):
            return False
        return independent([texts[k] for k in payloads], also=(key_name,))


def independent(assignments: list[tuple[str, str]], also: tuple[str, ...] = ()) -> bool:
    """`x = e` pairs with distinct targets (none of them in `also`) whose values mention
    none of the targets nor `also`: each value depends on the iteration alone, whatever
    order they run in (argmin payloads, a find-first loop's kept values)."""
    names = [name for name, _ in assignments]
    if len(set(names)) != len(names) or set(names) & set(also):
        return False
    return not any(mentions(value, other) for _, value in assignments for other in (*names, *also))


def _lambda_effects(walk: Walk, local: set[int], name: str) -> str:
    """Why the body of lambda `name` is not a function of its arguments and captures,
    or "": it may read captured variables and arrays, and write only its own locals."""
    for access in walk.accesses:
        if access.kind == "unknown":
            return f"lambda '{name}' reaches memory through '{access.text}'"
        if access.root_decl in local and access.kind != "local_array":
            return f"lambda '{name}' reaches memory through its pointer '{access.array}'"
        if access.root_decl not in local and access.is_write:
            return f"lambda '{name}' writes '{access.text}'"
    for ref in walk.refs:
        if "->" in ref.name:
            return f"lambda '{name}' reaches memory through '{ref.name}'"
        if ref.decl in local:
            continue
        if ref.mode != "read":
            return f"lambda '{name}' writes the captured '{ref.name}'"
        if ref.decl == 0 or (ref.is_global and not ref.type.startswith("const ")):
            return f"lambda '{name}' reads the global '{ref.name}'"
    return ""


def _moved_read(access: RawAccess, where: tuple[int, int, tuple[LoopNode, ...]]) -> RawAccess:
    """A lambda body's read of a captured array, as a read of any element at the call."""
    start, end, stack = where
    return RawAccess(
        array=access.array,
        root_decl=access.root_decl,
        kind=access.kind,
        elem_type=access.elem_type,
        indices=tuple(None for _ in access.indices),
        dim_sizes=access.dim_sizes,
        dim_texts=access.dim_texts,
        mode="read",
        start=start,
        end=end,
        text=access.text,
        stack=stack,
    )


def _element_of(cursor: ci.Cursor, base: ci.Cursor) -> str:
    if cursor.type.kind == TK.DEPENDENT:  # inside a template: read it off the array's type
        return dependent_element(base) or element_type(cursor)
    return element_type(cursor)


_PLAIN_NAME = re.compile(r"[A-Za-z_]\w*")


def _strip(text: str) -> str:
    while text.startswith("(") and text.endswith(")"):
        text = text[1:-1]
    return text


def _same(a: str, b: str) -> bool:
    return _strip(a) == _strip(b)


def _is_callee(cursor: ci.Cursor) -> bool:
    inner = unwrap(cursor)
    ref = inner.referenced if inner.kind in (CK.DECL_REF_EXPR, CK.MEMBER_REF_EXPR) else None
    return ref is not None and ref.kind in (
        CK.FUNCTION_DECL,
        CK.CXX_METHOD,
        CK.FUNCTION_TEMPLATE,
        CK.CONVERSION_FUNCTION,
    )


def _dependent_callee(src: Source, call: ci.Cursor, callee: ci.Cursor | None) -> str | None:
    """The name a call inside a template calls when it depends on the template's
    parameters (libclang spells such calls ""): `f(x)`, `f<R>(x)`, `v.size()`."""
    if callee is None:
        return None
    if callee.kind == CK.OVERLOADED_DECL_REF:
        return callee.spelling or None
    if callee.kind == CK.DECL_REF_EXPR:
        ref = callee.referenced
        if ref is not None and ref.kind in (CK.OVERLOADED_DECL_REF, CK.FUNCTION_TEMPLATE):
            return ref.spelling or None
        for child in kids(callee):
            if child.kind == CK.OVERLOADED_DECL_REF and child.spelling:
                return child.spelling
        return None
    if callee.kind == CK.MEMBER_REF_EXPR and not callee.spelling:
        words = re.findall(r"[A-Za-z_]\w*", src.text(callee).split("<", 1)[0])
        return words[-1] if len(words) > 1 else None
    return None


def dependent_element(base: ci.Cursor) -> str | None:
    """The element type of a template-dependent array: `T` of `std::vector<T>`,
    `std::array<T, N>` and `T *`."""
    spelling = re.sub(r"\s*&+\s*$", "", base.type.spelling)
    spelling = re.sub(r"^const\s+", "", spelling)
    hit = re.match(r"^(?:std::)?(?:vector|array)<(.+)>$", spelling)
    if hit:
        depth = 0
        for k, char in enumerate(hit.group(1)):
            depth += (char == "<") - (char == ">")
            if char == "," and depth == 0:
                return hit.group(1)[:k].strip()
        return hit.group(1).strip()
    if spelling.endswith("*"):
        return unqualified(spelling[:-1].strip())
    return None


def _qualified(cursor: ci.Cursor) -> str:
    ref = cursor.referenced
    name = cursor.spelling
    if ref is not None and ref.semantic_parent is not None:
        parent = ref.semantic_parent
        if parent.kind == CK.NAMESPACE and parent.spelling == "std":
            return "std::" + name
    return name


def _argument_modes(call: ci.Cursor, count: int) -> list[str]:
    """How a call uses its arguments' variables: a non-const reference parameter may
    write the variable ("addr"); everything else only reads it (what a pointer argument
    lets the callee do to the array is the callee's purity, judged elsewhere)."""
    modes = ["read"] * count
    callee = call.referenced
    if callee is None or callee.kind not in (CK.FUNCTION_DECL, CK.CXX_METHOD, CK.CONSTRUCTOR):
        return modes
    for k, param in enumerate(callee.get_arguments()):
        t = param.type.get_canonical()
        if k < count and t.kind in (TK.LVALUEREFERENCE, TK.RVALUEREFERENCE):
            if not t.get_pointee().is_const_qualified():
                modes[k] = "addr"
    return modes


def _pointerish(cursor: ci.Cursor) -> bool:
    inner = unwrap(cursor)
    if inner.kind == CK.UNARY_OPERATOR and inner.type.get_canonical().kind == TK.POINTER:
        return True
    t = cursor.type.get_canonical()
    if t.kind == TK.LVALUEREFERENCE:
        return not t.get_pointee().is_const_qualified()
    if t.kind == TK.POINTER:
        return not t.get_pointee().is_const_qualified() or inner.kind != CK.DECL_REF_EXPR
    return t.kind in ARRAY_TYPES or inner.type.get_canonical().kind in ARRAY_TYPES


def _is_std_container(cursor: ci.Cursor) -> bool:
    t = cursor.type
    if t.kind in (TK.LVALUEREFERENCE, TK.RVALUEREFERENCE):
        t = t.get_pointee()
    # in a template, the canonical spelling of `std::vector<T>` loses its `std::`
    spellings = (t.get_canonical().spelling, t.spelling)
    return any(
        re.sub(r"^(const |volatile )+", "", spelling).startswith(
            ("std::vector<", "std::array<", "std::__1::vector<")
        )
        for spelling in spellings
    )


# The root of a member array reached through `this` (written or implicit) in a method:
# one object for the whole call, like a pointer parameter.
THIS_ROOT = -1


def _on_this(cursor: ci.Cursor) -> bool:
    """`x` (implicit this) or `this->x`, also through nested fields (`this->s.x`)."""
    node = cursor
    while node.kind in (CK.MEMBER_REF_EXPR, CK.UNEXPOSED_EXPR, CK.PAREN_EXPR):
        children = kids(node)
        if not children:
            return node.kind == CK.MEMBER_REF_EXPR
        node = children[0]
    return node.kind == CK.CXX_THIS_EXPR


def _root_decl(cursor: ci.Cursor) -> ci.Cursor | None:
    node = cursor
    while node.kind in (CK.MEMBER_REF_EXPR, *(k for k in [CK.UNEXPOSED_EXPR, CK.PAREN_EXPR])):
        children = kids(node)
        if not children:
            return None
        node = children[0]
    if node.kind == CK.DECL_REF_EXPR and node.referenced is not None:
        return node.referenced
    return None


def element_type(cursor: ci.Cursor) -> str:
    """The element's type without qualifiers, as the program spells it (typedef names
    kept), or its canonical spelling for library-internal names (`value_type`); the
    scalar element for a row of a multi-dimensional array."""
    t = cursor.type
    while t.kind in ARRAY_TYPES:
        t = t.element_type
    spelling = t.spelling
    if "type" in spelling or "::" in spelling or spelling.startswith("__"):
        canonical = t.get_canonical()
        if canonical.kind == TK.LVALUEREFERENCE:
            canonical = canonical.get_pointee()
        spelling = canonical.spelling
    return unqualified(spelling)


def unqualified(spelling: str) -> str:
    words = [
        w
        for w in spelling.split()
        if w not in ("const", "volatile", "restrict", "__restrict", "__restrict__")
    ]
    return " ".join(words)


def array_info(src: Source, base: ci.Cursor):
    """(name, root decl hash, kind, sizes of every dimension, texts of inner dimensions)
    for the base of a subscript, or None when it is not a named array."""
    if base.kind == CK.DECL_REF_EXPR:
        ref = base.referenced
        if ref is None or ref.kind not in (CK.VAR_DECL, CK.PARM_DECL):
            return None
        t = ref.type.get_canonical()
        if t.kind in (TK.LVALUEREFERENCE, TK.RVALUEREFERENCE):
            t = t.get_pointee()
        sizes, texts = dimensions(src, ref, t)
        if _is_std_container(base):
            kind = "vector"
        elif ref.kind == CK.PARM_DECL:
            kind = "param_array" if len(sizes) > 1 else "pointer"
        elif t.kind in ARRAY_TYPES:
            is_global = (
                ref.semantic_parent is not None and ref.semantic_parent.kind == CK.TRANSLATION_UNIT
            )
            kind = (
                "global_array"
                if is_global or ref.storage_class == ci.StorageClass.STATIC
                else "local_array"
            )
        else:
            kind = "pointer"
        return ref.spelling, ref.hash, kind, sizes, texts
    if base.kind == CK.MEMBER_REF_EXPR:
        root = _root_decl(base)
        if root is None and not _on_this(base):
            return None
        t = base.type.get_canonical()
        sizes, texts = dimensions(src, base.referenced, t) if base.referenced else ((None,), ())
        kind = "vector" if _is_std_container(base) else "field"
        root_hash = root.hash if root is not None else THIS_ROOT
        return member_name(src, base), root_hash, kind, sizes, texts
    return None


def dimensions(src: Source, decl: ci.Cursor, t: ci.Type) -> tuple[tuple, tuple[str, ...]]:
    """Sizes of every dimension (the first is None for pointers) and the spelled
    sizes of the inner ones, read from the declaration when it is in the main file."""
    sizes: list[int | None] = []
    if t.kind == TK.POINTER:
        sizes.append(None)
        t = t.get_pointee().get_canonical()
        if t.kind not in ARRAY_TYPES:
            return tuple(sizes), ()
    while t.kind in ARRAY_TYPES:
        size = t.get_array_size() if t.kind == TK.CONSTANTARRAY else -1
        sizes.append(size if size >= 0 else None)
        t = t.element_type.get_canonical()
    spelled = _spelled_dims(src, decl)
    inner = sizes[1:]
    if len(spelled) == len(sizes):
        texts = tuple(spelled[1:])
    elif len(spelled) == len(inner):
        texts = tuple(spelled)
    else:
        texts = tuple(str(s) if s is not None else "?" for s in inner)
    return tuple(sizes), texts


def _spelled_dims(src: Source, decl: ci.Cursor) -> list[str]:
    # one declaration is read for every access to it, and a global table's initializer
    # can hold thousands of tokens: read once, and stop at the `=`
    key = ("dims", decl.hash, start_of(decl), end_of(decl))
    found = src.memo.get(key)
    if found is None:
        found = _read_dims(src, decl) if src.in_main(decl) else []
        src.memo[key] = found
    return list(found)


def _read_dims(src: Source, decl: ci.Cursor) -> list[str]:
    start, end = start_of(decl), end_of(decl)
    dims: list[str] = []
    current: list[str] = []
    depth = 0
    seen_name = False
    for k in range(src.token_index(start), len(src.token_offsets)):
        if src.token_offsets[k] >= end:
            break
        spelling = src.token_spellings[k]
        if spelling == decl.spelling and depth == 0:
            seen_name = True
            continue
        if not seen_name:
            continue
        if spelling == "=" and depth == 0:
            break
        if spelling == "[":
            depth += 1
            if depth == 1:
                current = []
                continue
        if spelling == "]":
            depth -= 1
            if depth == 0:
                dims.append("".join(current) or "?")
                continue
        if depth >= 1:
            current.append(spelling)
    return dims


def walk_function(src: Source, body: ci.Cursor) -> Walk:
    index_tree(body)
    walker = Walker(src)
    walker.statement(body)
    return walker.out
