"""How well cheap preconditioners serve conjugate gradients on the block interior point's Schur
complement (docs/design/structured-solver.md): a numpy prototype of the block-angular interior
point on the asymmetric multinomial (d = 3, resolution 10, Dirichlet(1, 2, 3)) that forms the exact
Schur complement Σ_k H_k⁻¹ and reports, every third iteration, its condition number and the
conjugate-gradient iterations each preconditioner needs to a relative residual of 1e-10.

    python benches/schur_preconditioners.py 20        # K = 20 records, ε = 0.5; a few minutes
"""
import os, sys, time, math
import numpy as np, scipy.sparse as sp, scipy.sparse.linalg as spl, scipy.linalg as sla
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import peers

def build(K, R, alpha, eps):
    (q, pi, L), edges, _ = peers.multinomial(3, K, R, eps, alpha=alpha)
    # c[k,i] = sum_j pi_j q_j(y_i) L(theta_j, out_k)
    c = (L.T) @ (pi[:, None] * q)   # out x obs
    E = np.asarray(edges)
    n = q.shape[1]; ne = len(E); rho = math.exp(eps)
    G = sp.coo_matrix((np.r_[np.ones(ne), -rho*np.ones(ne)], (np.r_[np.arange(ne), np.arange(ne)], np.r_[E[:,0], E[:,1]])), shape=(ne, n)).tocsr()
    return c, G

DREG = 1e-12
def psolve(cf, r):
    return sla.cho_solve(cf, r)

def pcg_iters(S, Pinv, r, tol=1e-10, maxit=2000):
    xk = np.zeros_like(r); res = r.copy(); zk = Pinv(res); p = zk.copy(); rz = res@zk
    r0 = np.linalg.norm(r)
    for i in range(maxit):
        Sp = S@p; a = rz/(p@Sp); xk += a*p; res -= a*Sp
        if np.linalg.norm(res) < tol*r0: return i+1
        zk = Pinv(res); rz2 = res@zk; p = zk + (rz2/rz)*p; rz = rz2
    return maxit
def gen_cond(S, P):
    w = sla.eigh(S, P, eigvals_only=True)
    return w.max()/w.min()
def precond_report(S, x, z, lus, G, GT, W, n, m):
    rng = np.random.default_rng(0); r = rng.standard_normal(n)
    Dg = (x/z).sum(0)
    out = []
    out.append(("castro0", pcg_iters(S, lambda v: v/Dg, r)))
    dS = np.diag(S).copy()
    out.append(("jacobi", pcg_iters(S, lambda v: v/dS, r)))
    A = (abs(GT@G) > 0).toarray()
    for hops in (1, 2, 4):
        Ah = np.linalg.matrix_power(A.astype(float), hops) > 0
        Sp = np.where(Ah, S, 0.0)
        ev = np.linalg.eigvalsh(Sp)
        if ev.min() <= 0:
            out.append((f"pat{hops}", f"indef {ev.min()/ev.max():.1e}")); continue
        cfp = sla.cho_factor(Sp)
        out.append((f"pat{hops}", pcg_iters(S, lambda v: sla.cho_solve(cfp, v), r)))
    ev = np.linalg.eigvalsh(S)
    print("   cond(S) %.1e  " % (ev.max()/ev.min()) + "  ".join(f"{a}={b}" for a,b in out), flush=True)
def ipm(c, G, tol=1e-10, maxit=200, verbose=True):
    m, n = c.shape; ne = G.shape[0]
    scale = np.abs(c).max(); c = c / scale
    GT = G.T.tocsr()
    x = np.full((m, n), 1.0/m)
    s = -(G @ x.T).T
    # dual start: lambda small, nu below every column's least cost, then Mehrotra-style shifts
    lam = np.full((m, ne), 1e-3)
    t = c + (GT @ lam.T).T
    nu = t.min(axis=0) - 0.1*(t.max()-t.min())
    z = t - nu
    dp = 0.5*((x*z).sum()+(s*lam).sum())/(z.sum()+lam.sum())
    dd = 0.5*((x*z).sum()+(s*lam).sum())/(x.sum()+s.sum())
    lam += dd; z += dd  # keeps dual residual? (lam shift changes G^T lam; fixed by infeasible start)
    N = m*(n+ne)
    rho_reg = 1e-10
    for it in range(maxit):
        rp = -((G @ x.T).T + s)
        rl = 1 - x.sum(0)
        rd = -(c + (GT @ lam.T).T - nu - z)
        mu = ((x*z).sum() + (s*lam).sum())/N
        pobj = (c*x).sum(); dobj = nu.sum()
        pinf = max(np.abs(rp).max(), np.abs(rl).max()); dinf = np.abs(rd).max()
        if verbose: print(f"{it:3d} pobj {pobj*scale:.10e} dobj {dobj*scale:.10e} gap {(pobj-dobj)/(abs(pobj)+1e-300):.2e} pinf {pinf:.1e} dinf {dinf:.1e} mu {mu:.1e}", flush=True)
        if pinf < 1e-9 and dinf < 1e-9 and abs(pobj-dobj) < tol*max(abs(pobj),1e-12): break
        if it > 45: break
        W = lam/s
        # factor H_k and form Schur
        lus = []
        S = np.zeros((n, n))
        for k in range(m):
            d = np.sqrt(x[k]/(z[k]+rho_reg*x[k]))
            M = (sp.identity(n) + sp.diags(d) @ GT @ sp.diags(W[k]) @ G @ sp.diags(d)).tocsc()
            lu = spl.splu(M); lus.append((lu, d))
            Mi = lu.solve(np.eye(n)); Mi = (Mi+Mi.T)/2
            S += d[:,None]*Mi*d[None,:]
        def hsolve(ld, v):
            lu, d = ld
            return d*lu.solve(d*v)
        reg = 1e-14*np.abs(np.diag(S)).max()
        delta = DREG*np.abs(np.diag(S)).max()
        try:
            cf = sla.cho_factor(S + delta*np.eye(n))
        except np.linalg.LinAlgError:
            print("   the Schur complement is no longer positive definite in double precision: stopped")
            break
        if it % 3 == 0 or it > 30:
            precond_report(S, x, z, lus, G, GT, W, n, m)
        def solve(rxz, rsl):
            b = rp - rsl/lam
            g = rd + rxz/x + (GT @ (W*b).T).T
            Hg = np.stack([hsolve(lus[k], g[k]) for k in range(m)])
            dnu = psolve(cf, rl - Hg.sum(0))
            best = None
            for _ in range(3):
                dx = Hg + np.stack([hsolve(lus[k], dnu) for k in range(m)])
                res = rl - dx.sum(0); rn = np.abs(res).max()
                if best is not None and rn >= best[0]: dnu = best[1]; break
                best = (rn, dnu.copy())
                dnu = dnu + psolve(cf, res)
            dx = Hg + np.stack([hsolve(lus[k], dnu) for k in range(m)])
            dlam = W*((G @ dx.T).T - b)
            ds = (rsl - s*dlam)/lam
            dz = (rxz - z*dx)/x
            return dx, ds, dlam, dnu, dz
        def steps(dx, ds, dlam, dz):
            def st(v, dv):
                neg = dv < 0
                return min(1.0, (-v[neg]/dv[neg]).min()) if neg.any() else 1.0
            return min(st(x, dx), st(s, ds)), min(st(z, dz), st(lam, dlam))
        dx, ds, dlam, dnu, dz = solve(-x*z, -s*lam)
        ap, ad = steps(dx, ds, dlam, dz)
        mua = (((x+ap*dx)*(z+ad*dz)).sum() + ((s+ap*ds)*(lam+ad*dlam)).sum())/N
        sig = (mua/mu)**3
        dx2, ds2, dlam2, dnu2, dz2 = solve(sig*mu - x*z - dx*dz, sig*mu - s*lam - ds*dlam)
        ap, ad = steps(dx2, ds2, dlam2, dz2)
        ap = min(1, 0.99*ap); ad = min(1, 0.99*ad)
        if verbose: print(f"     ap {ap:.3f} ad {ad:.3f} sig {sig:.2e} linkres {np.abs(rl-dx2.sum(0)).max():.1e}")
        x += ap*dx2; s += ap*ds2; lam += ad*dlam2; nu += ad*dnu2; z += ad*dz2
    return x, lam, nu*scale, it

if __name__ == "__main__":
    K = int(sys.argv[1]); eps = float(sys.argv[2]) if len(sys.argv) > 2 else 0.5
    c, G = build(K, 10, [1.0, 2.0, 3.0], eps)
    print("m n E", c.shape, G.shape)
    t = time.time(); x, lam, nu, it = ipm(c, G); print("time", time.time()-t, "iters", it)
    
